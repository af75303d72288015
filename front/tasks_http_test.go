package front

import (
	"strings"
	"testing"
)

// events rewrites the answer's data line of an event stream and leaves
// every other line as it was, whatever ends the lines.
func TestRewriterEvents(t *testing.T) {
	w := &rewriter{id: []byte(`7`), method: "tools/list"}
	answer := `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`
	other := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	for _, tc := range []struct{ name, nl, end string }{
		{"LF", "\n", "\n"},
		{"CRLF", "\r\n", "\r\n"},
		{"no final newline", "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := "event: message" + tc.nl + "data: " + other + tc.nl + tc.nl +
				"event: message" + tc.nl + "id: 2" + tc.nl + "data: " + answer + tc.end
			got := string(w.events([]byte(stream)))
			if n := strings.Count(got, `"taskSupport":"optional"`); n != 1 {
				t.Fatalf("%d tools marked for tasks, want 1:\n%q", n, got)
			}
			if !strings.Contains(got, "data: "+other+tc.nl) || !strings.Contains(got, "id: 2"+tc.nl) {
				t.Errorf("other lines changed:\n%q", got)
			}
			lines := strings.Count(stream, "\n")
			if tc.end == "" {
				lines++ // the last line gains its end
			}
			if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != lines {
				t.Errorf("lines: got %q from %q", got, stream)
			}
		})
	}
}

package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRing(t *testing.T) {
	r := newRing(8)
	for _, s := range []string{"abc", "defg", "hijklmnopq", "rs"} {
		r.Write([]byte(s))
	}
	if got := string(r.Bytes()); got != "klmnopqrs"[1:] {
		t.Errorf("ring = %q, want %q", got, "lmnopqrs")
	}
	if got := explain("node:x\n  throw err;\n\nError: Cannot find module 'x'\n    at y\n"); got != "Error: Cannot find module 'x'" {
		t.Errorf("explain = %q", got)
	}
}

// readAll returns what a lineReader passes on from input.
func readAll(t *testing.T, input string, limit int) string {
	t.Helper()
	out, err := io.ReadAll(newLineReader(strings.NewReader(input), limit, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestLineReader(t *testing.T) {
	big := strings.Repeat("x", 200)
	tests := []struct{ name, in, want string }{
		{"plain", `{"a":1}` + "\n" + `[{"b":2}]` + "\n", `{"a":1}` + "\n" + `[{"b":2}]` + "\n"},
		{"no final newline", `{"a":1}`, `{"a":1}` + "\n"},
		{"crlf and blank lines", "\r\n" + `{"a":1}` + "\r\n\n", `{"a":1}` + "\n"},
		{"garbage", "Server started\n{broken\n\x00\x01\n" + `{"a":1}` + "\n", `{"a":1}` + "\n"},
		{"oversized, id first", `{"jsonrpc":"2.0","id":7,"result":{"t":"` + big + `"}}` + "\n" + `{"a":1}` + "\n",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"response larger than 100 bytes discarded (the server's message exceeds switchboard's bound)"}}` + "\n" + `{"a":1}` + "\n"},
		{"oversized, id last", `{"result":{"t":"` + big + `"},"jsonrpc":"2.0","id":"x"}` + "\n",
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"response larger than 100 bytes discarded (the server's message exceeds switchboard's bound)"}}` + "\n"},
		{"oversized notification", `{"method":"n","params":{"id":3,"t":"` + big + `"}}` + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readAll(t, tt.in, 100); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSanitizeMessage(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"x-3d","v":1}],"isError":false}}`
	out, changed := sanitizeMessage([]byte(in))
	if !changed {
		t.Fatal("not changed")
	}
	var m struct {
		Result struct {
			Content []map[string]any `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	b := m.Result.Content[1]
	if b["type"] != "text" || !strings.Contains(b["text"].(string), `"x-3d"`) || b["_meta"].(map[string]any)[unsupportedContentKey] == nil {
		t.Errorf("replaced block = %v", b)
	}
	known := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"","mimeType":"image/png"}]}}`
	if out, changed := sanitizeMessage([]byte(known)); changed || string(out) != known {
		t.Errorf("known content changed: %s", out)
	}
	prompt := `{"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"weird"}}]}}`
	if _, changed := sanitizeMessage([]byte(prompt)); !changed {
		t.Error("prompt message with unknown content not changed")
	}
}

func TestCheckToolName(t *testing.T) {
	for name, ok := range map[string]bool{
		"echo": true, "get-sum_2.x": true, "日本": true, "": false, "a\tb": false,
		"a\u2028b": false, strings.Repeat("a", 129): false, "\xff": false,
	} {
		if got := checkToolName(name) == nil; got != ok {
			t.Errorf("checkToolName(%q) ok = %v, want %v", name, got, ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	for i, want := range []time.Duration{100, 200, 400, 800} {
		want *= time.Millisecond
		if got := backoff(100*time.Millisecond, i); got < want*8/10 || got > want*12/10 {
			t.Errorf("backoff(100ms, %d) = %s, want %s ± 20%%", i, got, want)
		}
	}
	if got := backoff(time.Second, 40); got > maxReconnectDelay*12/10 {
		t.Errorf("backoff capped = %s", got)
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{60 * time.Second: "60s", 300 * time.Millisecond: "300ms", 1500 * time.Millisecond: "1.5s"} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func FuzzSanitizeMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"x"}]}}`))
	f.Add([]byte(`{"result":{"messages":[{"content":{"type":"text"}}]},"content":1}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, changed := sanitizeMessage(msg)
		if changed && !json.Valid(out) {
			t.Errorf("invalid output %q", out)
		}
		if !changed && !bytes.Equal(out, msg) {
			t.Error("unchanged output differs")
		}
	})
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\nnoise\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"" + strings.Repeat("y", 80) + "\"}}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := io.ReadAll(newLineReader(bytes.NewReader(in), 64, slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(out) {
			if !json.Valid(line) {
				t.Errorf("invalid line %q", line)
			}
		}
	})
}

// FuzzInspect checks that inspect, which validates a message and repairs
// its content in one parse, accepts exactly the valid JSON, and agrees
// with sanitizeMessage on what it returns.
func FuzzInspect(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"x"}]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}`))
	f.Add([]byte(`{"result":{"content":"no"}} trailing`))
	f.Add([]byte(`{"content":1,"result":[1]}`))
	f.Add([]byte(`[{"content":1}]`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, ok := inspect(msg)
		if ok != json.Valid(msg) {
			t.Fatalf("inspect(%q) ok = %v, json.Valid = %v", msg, ok, !ok)
		}
		if !ok {
			return
		}
		want, _ := sanitizeMessage(msg)
		if !bytes.Equal(out, want) {
			t.Errorf("inspect(%q) = %q, sanitizeMessage = %q", msg, out, want)
		}
	})
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := newLineWriter(func(l string) { got = append(got, l) })
	long := strings.Repeat("x", maxStderrLine+10)
	for _, chunk := range []string{"one\ntw", "o\r\n", long, "\nthree\n", "no newline yet"} {
		w.Write([]byte(chunk))
	}
	want := []string{"one", "two", long[:maxStderrLine], "three"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if newLineWriter(nil) != nil {
		t.Errorf("a nil func makes a writer")
	}
}

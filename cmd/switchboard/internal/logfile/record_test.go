package logfile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzJSONLines: whatever a log line holds (it holds what servers wrote to
// stderr), logs --json prints it as one line of JSON that decodes back to
// the Record Parse gives.
func FuzzJSONLines(f *testing.F) {
	for _, s := range []string{
		`time=2026-01-01T10:00:01.000Z level=INFO msg=stderr session=a1 server=local line="booting"`,
		`time=2026-01-01T10:00:02.000Z level=INFO msg=call session=a1 server=web operation=call tool=echo outcome=ok ms=3`,
		`level=WARN msg="a server=web inside" line="x\"y" line=z`,
		"garbage \x00\xff without fields",
		`msg=stderr line="\u2028"`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var out bytes.Buffer
		if _, err := JSONLines(&out).Write([]byte(line + "\n")); err != nil {
			t.Fatalf("write: %v", err)
		}
		if n := bytes.Count(out.Bytes(), []byte("\n")); n != 1 || !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			t.Fatalf("got %d lines %q, want one", n, out.Bytes())
		}
		var got Record
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out.Bytes())
		}
		if got.Stream != "serve" && got.Stream != "stderr" {
			t.Errorf("stream %q", got.Stream)
		}
	})
}

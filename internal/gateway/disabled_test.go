package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestDisabledNeverStarted: a server the user disabled after it was
// indexed is found by a search with includeDisabled, from the catalog,
// and marked; nothing a request does starts it or calls its tools, and
// the refusal says how to enable it.
func TestDisabledNeverStarted(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	fx := fixture(testserver.Good)
	seed := engineIn(t, home, map[string]def{"fx": fx}, nil, nil)
	if r := must(t, seed, `{"search":"record"}`); len(r.Details.Tools) == 0 {
		t.Fatalf("the enabled server's search found nothing:\n%s", r.Text)
	}
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}

	off := def{"disabled": true}
	for k, v := range fx {
		off[k] = v
	}
	e := engineIn(t, home, map[string]def{"fx": off}, nil, nil)
	marker := filepath.Join(t.TempDir(), "called")
	r := must(t, e, `{"search":"record","includeDisabled":true,"includeSchemas":true}`)
	if len(r.Details.Tools) == 0 || !r.Details.Tools[0].Disabled || r.Details.Tools[0].InputShape == "" {
		t.Errorf("search with includeDisabled: got tools %+v, want fx's record marked disabled, with its shape", r.Details.Tools)
	}
	if r := must(t, e, `{"search":"record"}`); len(r.Details.Tools) != 0 {
		t.Errorf("search without includeDisabled found %+v, want nothing", r.Details.Tools)
	}
	for _, req := range []string{
		`{"tool":"fx_record","args":{"file":"` + marker + `"}}`,
		`{"tool":"record","args":{"file":"` + marker + `"}}`,
		`{"tool":"record","server":"fx","args":{"file":"` + marker + `"}}`,
		`{"describe":"record"}`,
		`{"server":"fx"}`,
		`{"operation":"reconnect","server":"fx"}`,
	} {
		r := handle(t, e, req)
		if !r.IsError || !strings.Contains(r.Text, "switchboard enable fx") {
			t.Errorf("%s: got (error %v) %q, want an error naming switchboard enable fx", req, r.IsError, r.Text)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the disabled server's tool ran: %s exists (%v)", marker, err)
	}
	for _, st := range e.pool.Snapshot() {
		if st.Name == "fx" && st.State != upstream.StateDisabled {
			t.Errorf("fx is %s, want %s: it was started", st.State, upstream.StateDisabled)
		}
	}
}

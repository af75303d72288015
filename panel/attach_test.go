package panel

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/front"
)

// attached serves the fixture's engine as switchboard serve --http does,
// with the admin endpoint behind token, and returns its URL.
func attached(t *testing.T, f *fixture, token string) string {
	t.Helper()
	eng := f.local.Current()
	srv, err := front.New(t.Context(), eng, &front.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	h, err := srv.Handler(front.HTTPOptions{Token: token, Admin: &front.Admin{Engine: eng, Calls: f.log, Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestRemote(t *testing.T) {
	f := newFixture(t, nil)
	const token = "attach-test-token-0123456789"
	url := attached(t, f, token)
	if r := f.local.Current().Handle(t.Context(), json.RawMessage(`{"tool":"get-sum","server":"calc","args":{"a":1,"b":2}}`)); r.IsError {
		t.Fatal(r.Text)
	}

	bad, err := NewRemote(url+"/mcp", "wrong")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Status(t.Context()); err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "SWITCHBOARD_TOKEN") {
		t.Errorf("a wrong token gives %v, want a 401 that says where the token goes", err)
	}
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x/"} {
		if _, err := NewRemote(u, ""); err == nil {
			t.Errorf("NewRemote(%q) took it", u)
		}
	}

	r, err := NewRemote(url+"/mcp", token)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Servers) != 3 || st.Servers[1].Name != "calc" || st.Servers[1].State != "connected" || st.Servers[1].LastCall.IsZero() {
		t.Errorf("status: %+v", st.Servers)
	}
	calls, err := r.Calls(t.Context())
	if err != nil || len(calls) != 1 || calls[0].Tool != "get-sum" {
		t.Errorf("calls: %+v, %v", calls, err)
	}
	if err := r.Reconnect(t.Context(), "calc"); err != nil {
		t.Errorf("reconnect: %v", err)
	}
	if err := r.Reconnect(t.Context(), "broken"); err == nil || !strings.Contains(err.Error(), "nonexistent") {
		t.Errorf("reconnecting broken: %v, want its error", err)
	}
}

// TestAttachScreen: attached, the panel shows status and calls, and
// refuses what only a local panel can do.
func TestAttachScreen(t *testing.T) {
	f := newFixture(t, nil)
	const token = "attach-test-token-0123456789"
	remote, err := NewRemote(attached(t, f, token), token)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, remote, f.home, 100, 12)
	r.waitFor("SOURCE")
	r.keys("down", "r")
	r.waitForRe(`calc\s+http\s+connected`)
	r.keys("c")
	r.waitFor("read-only")
	r.keys("2") // no tools screen attached
	s := r.screen()
	s = strings.ReplaceAll(s, remote.Base, "URL")
	r.t.Run("screen", func(t *testing.T) { goldenText(t, s) })
	if !strings.Contains(s, "[1 servers]") {
		t.Errorf("2 left the servers screen of an attached panel:\n%s", s)
	}
}

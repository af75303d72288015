package panel

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/front"
)

// gateway is switchboard serve --http over the fixture's configuration,
// with the admin endpoint behind token, and a client connected to it.
type gateway struct {
	url string
	cs  *mcp.ClientSession
}

func attached(t *testing.T, f *fixture, token string) *gateway {
	t.Helper()
	calls := switchboard.NewCallLog(0)
	srv, err := front.New(t.Context(), config.Load(f.local.Dirs), &front.Options{Engine: switchboard.Options{
		Lookup: func(string) (string, bool) { return "", false }, CatalogPath: filepath.Join(t.TempDir(), "catalog.db"),
		SpillDir: filepath.Join(t.TempDir(), "spill"), OnCall: calls.Add,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := srv.Handler(front.HTTPOptions{Token: token, Admin: &front.Admin{Calls: calls, Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gateway{url: ts.URL, cs: cs}
}

// call calls a tool through the gateway's mcp tool, as an agent does.
func (g *gateway) call(t *testing.T, args string) {
	t.Helper()
	res, err := g.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: json.RawMessage(args)})
	if err != nil || res.IsError {
		t.Fatalf("calling through the gateway: %v %+v", err, res)
	}
}
func TestRemote(t *testing.T) {
	f := newFixture(t, nil)
	const token = "attach-test-token-0123456789"
	g := attached(t, f, token)
	url := g.url
	g.call(t, `{"tool":"get-sum","server":"calc","args":{"a":1,"b":2}}`)

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
	g := attached(t, f, token)
	// An agent's call: calc is connected and in the catalog, whose tool
	// count status shows once the panel has reconnected it.
	g.call(t, `{"tool":"get-sum","server":"calc","args":{"a":1,"b":2}}`)
	remote, err := NewRemote(g.url, token)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, remote, f.home, 100, 12)
	r.waitFor("SOURCE")
	r.keys("down", "r")
	r.waitFor("reconnected calc")
	r.waitForRe(`calc\s+http\s+connected\s+3`)
	r.keys("c")
	r.waitFor("read-only")
	r.keys("2") // no tools screen attached
	s := r.screen()
	s = strings.ReplaceAll(s, remote.Base, "URL")
	r.t.Run("screen", func(t *testing.T) { goldenText(t, s) })
	if !strings.Contains(s, "[1:servers]") {
		t.Errorf("2 left the servers screen of an attached panel:\n%s", s)
	}
}

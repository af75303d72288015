package panel

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
)

// bearerOf sends the access token it holds now: a user whose token is
// renewed while the panel runs.
type bearerOf struct{ token atomic.Value }

func (b *bearerOf) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token.Load().(string))
	return http.DefaultTransport.RoundTrip(r)
}

// TestApprovalsNotApprover: through a gateway with identity (the test
// OpenID provider), beta's call waits for "admins"; alpha's panel lists
// it with beta as the requester. A decision sent with a token not in
// "admins" (beta's own: the token renewed after its user left the group)
// gets the gateway's 403 in the message line, and the call waits on;
// alpha's allow then lets it through.
func TestApprovalsNotApprover(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp := idptest.Start(t, base+"/mcp")
	home := t.TempDir()
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"guarded": map[string]any{"url": calcServer(t) + "/mcp",
			"approve": map[string]any{"when": "always", "approvers": []string{"admins"}}}},
		"settings": map[string]any{"identity": map[string]any{"issuer": idp.Issuer, "audience": base + "/mcp", "adminGroup": "admins"}},
	})
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(config.FromEnv(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}, home, runtime.GOOS))
	if err := cfg.Err(); err != nil {
		t.Fatal(err)
	}
	srv, err := front.New(t.Context(), cfg, &front.Options{Engine: switchboard.Options{
		Lookup: func(string) (string, bool) { return "", false }, CatalogPath: filepath.Join(t.TempDir(), "catalog.db"),
		SpillDir: filepath.Join(t.TempDir(), "spill"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := srv.Handler(front.HTTPOptions{Identity: cfg.Settings.Identity, Admin: &front.Admin{Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)

	alphaTok := idp.Token(t, idptest.Alpha, idptest.Password) // in admins
	betaTok := idp.Token(t, idptest.Beta, idptest.Password)
	betaBearer := &bearerOf{}
	betaBearer.token.Store(betaTok)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "beta", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: betaBearer}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	done := (&gateway{url: base, cs: cs}).callGuarded(t, 1)

	alpha := &bearerOf{}
	alpha.token.Store(alphaTok)
	remote, err := NewRemote(base, "")
	if err != nil {
		t.Fatal(err)
	}
	remote.Client = &http.Client{Transport: alpha}
	waitPending(t, remote, 1, done)

	r := start(t, remote, home, 100, 16)
	r.keys("5")
	r.waitFor("arguments of 1")
	if s := r.screen(); !strings.Contains(s, idptest.BetaSub) {
		t.Errorf("the requester %s is not shown:\n%s", idptest.BetaSub, s)
	}
	alpha.token.Store(betaTok)
	r.keys("a", "y")
	r.waitFor("not a member of the approver groups")
	// The list read after the decision, with beta's token, is empty:
	// beta may decide nothing. Alpha's token again from here on.
	r.waitFor("No call waits for your approval.")
	alpha.token.Store(alphaTok)
	if got := waitPending(t, remote, 1, done); got[0].ID != "1" {
		t.Fatalf("after the 403, waiting: %+v", got)
	}
	r.keys("5")
	r.waitFor("arguments of 1")
	r.keys("a", "y")
	r.waitFor("allowed get-sum on guarded by " + idptest.BetaSub + " (approval 1)")
	if a := <-done; a.err != nil || a.res.IsError || a.text() != "The sum of 1 and 2 is 3." {
		t.Fatalf("beta's call after alpha allowed it: %s", a.text())
	}
}

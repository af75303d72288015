package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestPromptCallback: a host that implements Options.Prompt lets its user
// log in when a call first needs it, and the call goes on; without it, the
// call says needs-auth and names the command, and after Login it works.
// Without Credentials there is no OAuth at all: the 401 says to give the
// server credentials.
func TestPromptCallback(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	servers := map[string]def{"api": {"url": as.URL()}}
	var shown []string
	prompt := func(ctx context.Context, server, authURL string) (string, error) {
		shown = append(shown, server)
		_, err := oauthtest.Follow(ctx, authURL)
		return "", err
	}
	e := engineIn(t, t.TempDir(), servers, nil, &Options{Prompt: prompt, Credentials: credstore.NewFile(t.TempDir())})
	r := must(t, e, `{"tool":"echo","server":"api","args":{"text":"hi"}}`)
	wantText(t, r, "hi")
	if len(shown) != 1 || shown[0] != "api" {
		t.Errorf("prompted for %v, want [api]", shown)
	}

	home := t.TempDir()
	quiet := engineIn(t, home, servers, nil, &Options{Credentials: credstore.NewFile(t.TempDir())})
	r = handle(t, quiet, `{"tool":"echo","server":"api","args":{"text":"hi"}}`)
	if !r.IsError {
		t.Fatalf("without a login: %s", r.Text)
	}
	wantText(t, r, `connecting "api": needs-auth: the server requires an OAuth login; hint: switchboard auth login api`)
	if err := quiet.Login(t.Context(), "api", prompt); err != nil {
		t.Fatal(err)
	}
	wantText(t, must(t, quiet, `{"tool":"echo","server":"api","args":{"text":"again"}}`), "again")
	st, err := quiet.AuthStatus(t.Context())
	if err != nil || len(st) != 1 || !st[0].LoggedIn || st[0].Store != "file" || !st[0].Refreshable {
		t.Fatalf("AuthStatus = %+v, %v", st, err)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), oauthtest.CanaryPrefix) {
		t.Errorf("AuthStatus holds a token: %s", b)
	}
	if removed, revokeErr, err := quiet.Logout(t.Context(), "api"); removed != 1 || revokeErr != nil || err != nil {
		t.Errorf("Logout = %d, %v, %v", removed, revokeErr, err)
	}
	if st, _ := quiet.AuthStatus(t.Context()); st[0].LoggedIn {
		t.Errorf("after Logout: %+v", st)
	}

	bare := engineIn(t, t.TempDir(), servers, nil, nil)
	r = handle(t, bare, `{"tool":"echo","server":"api","args":{"text":"hi"}}`)
	wantText(t, r, "HTTP 401 Unauthorized; hint: give it credentials in the server's headers")
	if st, err := bare.AuthStatus(t.Context()); err != nil || st[0].OAuth || st[0].Store != "none" || st[0].Reason != "no credential store" {
		t.Errorf("AuthStatus without a store = %+v, %v", st, err)
	}
}

package front

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestPerUserCredentials: two users signed in at a real OpenID provider
// call one OAuth-protected server (perUser, the default with identity).
// A logs in upstream; B's call then needs B's own login, whose URL goes
// to B's client alone; A's token is never sent on B's call; once B has
// logged in, each call carries its own user's token, kept under its
// user's key in the credential store.
func TestPerUserCredentials(t *testing.T) {
	log := &oauthtest.TokenLog{}
	as := oauthtest.New(t, oauthtest.Options{Wrap: log.Wrap})
	store := credstore.NewFile(filepath.Join(t.TempDir(), "credentials"))
	ig := newIdentityGatewayOpts(t, identityOpts{
		servers: map[string]def{"api": {"url": as.URL()}},
		rules: []any{
			map[string]any{"group": "alpha", "tools": []string{"mcp__api__*"}},
			map[string]any{"group": "beta", "tools": []string{"mcp__api__*"}},
		},
		engine: switchboard.Options{Credentials: store},
	})
	aClient, bClient := oauthtest.NewAsker(true), oauthtest.NewAsker(false)
	a := ig.connectAsWith(t, ig.idp.Token(t, idptest.Alpha, idptest.Password), aClient.Options())
	b := ig.connectAsWith(t, ig.idp.Token(t, idptest.Beta, idptest.Password), bClient.Options())
	echo := func(cs *mcp.ClientSession, s string) (string, bool) {
		return callText(t, cs, map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": s}})
	}

	if out, isErr := echo(a, "A1"); isErr || out != "A1" {
		t.Fatalf("A's call, A logging in: %v %s", isErr, out)
	}
	if n := len(aClient.Asked()); n != 1 {
		t.Fatalf("A was sent %d authorization URLs, want 1", n)
	}

	// B has not logged in: B is asked, and declines; A's login is not
	// B's.
	out, isErr := echo(b, "B1")
	if !isErr || !strings.Contains(out, "needs-auth") {
		t.Fatalf("B's call before B logged in: %v %s", isErr, out)
	}
	// (Asked once per attempt: the listing of the server's tools, then
	// the call.)
	gotB := bClient.Asked()
	if len(gotB) == 0 {
		t.Fatal("B was sent no authorization URL")
	}
	for _, u := range gotB {
		if !strings.HasPrefix(u, as.AS.URL+"/authorize?") {
			t.Fatalf("B was sent %q, want an authorization URL", u)
		}
	}
	if n := len(aClient.Asked()); n != 1 {
		t.Fatalf("A was sent B's authorization URL (%d URLs)", n)
	}

	bClient.SetAccept(true)
	if out, isErr := echo(b, "B2"); isErr || out != "B2" {
		t.Fatalf("B's call, B logging in: %v %s", isErr, out)
	}
	if out, isErr := echo(a, "A2"); isErr || out != "A2" {
		t.Fatalf("A's call after B logged in: %v %s", isErr, out)
	}
	if n := len(aClient.Asked()); n != 1 {
		t.Errorf("A was asked to log in %d times, want once", n)
	}

	tokA := log.Tokens("A1")
	if len(tokA) != 1 || tokA[0] == "" {
		t.Fatalf("A's first call carried %q", tokA)
	}
	for _, s := range []string{"B1", "B2"} {
		for _, tok := range log.Tokens(s) {
			if tok == tokA[0] {
				t.Errorf("B's call %s carried A's token", s)
			}
		}
	}
	if got := log.Tokens("B2"); len(got) != 1 || got[0] == "" {
		t.Errorf("B's call carried %q, want B's own token", got)
	}
	if got := log.Tokens("A2"); len(got) != 1 || got[0] != tokA[0] {
		t.Errorf("A's second call carried %q, want A's token", got)
	}

	// Each user's tokens are under a key of their own.
	keys, err := store.Keys("oauth/api/")
	if err != nil {
		t.Fatal(err)
	}
	var userTokens int
	for _, k := range keys {
		if strings.Contains(k, "/user/") && strings.HasSuffix(k, "/token") {
			userTokens++
		}
		if strings.HasSuffix(k, "/token") && !strings.Contains(k, "/user/") {
			t.Errorf("a shared token is stored: %s", k)
		}
	}
	if userTokens != 2 {
		t.Errorf("stored tokens of %d users, want 2: %q", userTokens, keys)
	}
}

// TestPerUserLoginNoFallback: a user's login whose client cannot open its
// authorization URL fails with needs-auth; it never goes to the host's
// own prompter (a browser on the gateway's machine), where someone else
// would log in as that user.
func TestPerUserLoginNoFallback(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	var mu sync.Mutex
	var prompted []string
	host := func(ctx context.Context, server, authURL string) (string, error) {
		mu.Lock()
		prompted = append(prompted, server)
		mu.Unlock()
		_, err := oauthtest.Follow(ctx, authURL) // the gateway machine's browser approves
		return "", err
	}
	ig := newIdentityGatewayOpts(t, identityOpts{
		servers: map[string]def{"api": {"url": as.URL()}},
		rules:   []any{map[string]any{"group": "alpha", "tools": []string{"mcp__api__*"}}},
		engine:  switchboard.Options{Credentials: credstore.NewFile(filepath.Join(t.TempDir(), "credentials")), Prompt: host},
	})
	a := ig.connectAs(t, ig.idp.Token(t, idptest.Alpha, idptest.Password))
	out, isErr := callText(t, a, map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}})
	if !isErr || !strings.Contains(out, "needs-auth") {
		t.Fatalf("a user whose client cannot open the URL: %v %s", isErr, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(prompted) != 0 {
		t.Errorf("the host's prompter was asked for a user's login: %q", prompted)
	}
	if c := as.Counts(); c.CodeGrants != 0 {
		t.Errorf("%d logins happened at the authorization server, want none", c.CodeGrants)
	}
}

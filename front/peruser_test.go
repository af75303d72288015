package front

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
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

// tokenLog is what an OAuth-protected upstream saw: the bearer token each
// tools/call carried, by the text it echoes.
type tokenLog struct {
	mu    sync.Mutex
	calls map[string][]string // echo text → tokens sent with it
}

// wrap records each tools/call's token before the server handles it.
func (l *tokenLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Arguments struct {
						Text string `json:"text"`
					} `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				l.mu.Lock()
				l.calls[msg.Params.Arguments.Text] = append(l.calls[msg.Params.Arguments.Text], tok)
				l.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (l *tokenLog) tokens(text string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls[text]...)
}

// asker is a user's client that supports URL elicitation: it records the
// authorization URLs it is sent and, when it accepts, approves in the
// user's browser.
type asker struct {
	mu     sync.Mutex
	urls   []string
	accept bool
}

func (a *asker) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.urls = append(a.urls, req.Params.URL)
			accept := a.accept
			a.mu.Unlock()
			if !accept {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			if _, err := oauthtest.Follow(ctx, req.Params.URL); err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
}

func (a *asker) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.urls...)
}

func (a *asker) setAccept(v bool) {
	a.mu.Lock()
	a.accept = v
	a.mu.Unlock()
}

// TestPerUserCredentials: two users signed in at a real OpenID provider
// call one OAuth-protected server (perUser, the default with identity).
// A logs in upstream; B's call then needs B's own login, whose URL goes
// to B's client alone; A's token is never sent on B's call; once B has
// logged in, each call carries its own user's token, kept under its
// user's key in the credential store.
func TestPerUserCredentials(t *testing.T) {
	log := &tokenLog{calls: map[string][]string{}}
	as := oauthtest.New(t, oauthtest.Options{Wrap: log.wrap})
	store := credstore.NewFile(filepath.Join(t.TempDir(), "credentials"))
	ig := newIdentityGatewayOpts(t, identityOpts{
		servers: map[string]def{"api": {"url": as.URL()}},
		rules: []any{
			map[string]any{"group": "alpha", "tools": []string{"mcp__api__*"}},
			map[string]any{"group": "beta", "tools": []string{"mcp__api__*"}},
		},
		engine: switchboard.Options{Credentials: store},
	})
	aClient, bClient := &asker{accept: true}, &asker{}
	a := ig.connectAsWith(t, ig.idp.Token(t, idptest.Alpha, idptest.Password), aClient.options())
	b := ig.connectAsWith(t, ig.idp.Token(t, idptest.Beta, idptest.Password), bClient.options())
	echo := func(cs *mcp.ClientSession, s string) (string, bool) {
		return callText(t, cs, map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": s}})
	}

	if out, isErr := echo(a, "A1"); isErr || out != "A1" {
		t.Fatalf("A's call, A logging in: %v %s", isErr, out)
	}
	if n := len(aClient.asked()); n != 1 {
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
	gotB := bClient.asked()
	if len(gotB) == 0 {
		t.Fatal("B was sent no authorization URL")
	}
	for _, u := range gotB {
		if !strings.HasPrefix(u, as.AS.URL+"/authorize?") {
			t.Fatalf("B was sent %q, want an authorization URL", u)
		}
	}
	if n := len(aClient.asked()); n != 1 {
		t.Fatalf("A was sent B's authorization URL (%d URLs)", n)
	}

	bClient.setAccept(true)
	if out, isErr := echo(b, "B2"); isErr || out != "B2" {
		t.Fatalf("B's call, B logging in: %v %s", isErr, out)
	}
	if out, isErr := echo(a, "A2"); isErr || out != "A2" {
		t.Fatalf("A's call after B logged in: %v %s", isErr, out)
	}
	if n := len(aClient.asked()); n != 1 {
		t.Errorf("A was asked to log in %d times, want once", n)
	}

	tokA := log.tokens("A1")
	if len(tokA) != 1 || tokA[0] == "" {
		t.Fatalf("A's first call carried %q", tokA)
	}
	for _, s := range []string{"B1", "B2"} {
		for _, tok := range log.tokens(s) {
			if tok == tokA[0] {
				t.Errorf("B's call %s carried A's token", s)
			}
		}
	}
	if got := log.tokens("B2"); len(got) != 1 || got[0] == "" {
		t.Errorf("B's call carried %q, want B's own token", got)
	}
	if got := log.tokens("A2"); len(got) != 1 || got[0] != tokA[0] {
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

package front

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
)

// exchangeUpstream is an MCP server (go-sdk, Streamable HTTP) that trusts
// the test OpenID provider: it takes only the provider's JWTs whose
// audience is its own URL, checked with identity.Verifier against the
// provider's keys, and records the subject and token of each call. It
// answers nothing until ready is closed (the provider starts after it).
type exchangeUpstream struct {
	ts    *httptest.Server
	ready chan struct{}
	h     http.Handler // set before ready is closed

	mu    sync.Mutex
	calls []upstreamCall
}

type upstreamCall struct{ subject, token string }

func newExchangeUpstream(t *testing.T) *exchangeUpstream {
	u := &exchangeUpstream{ready: make(chan struct{})}
	u.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-u.ready:
		case <-r.Context().Done():
			return
		}
		u.h.ServeHTTP(w, r)
	}))
	t.Cleanup(u.ts.Close)
	return u
}

func (u *exchangeUpstream) url() string { return u.ts.URL + "/mcp" }

// start makes the server trust issuer, and lets requests in.
func (u *exchangeUpstream) start(issuer string) {
	v := identity.New(&config.Identity{Issuer: issuer, Audience: u.url()}, nil)
	srv := mcp.NewServer(&mcp.Implementation{Name: "exchange-upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "says who called"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ti := req.Extra.TokenInfo
		u.mu.Lock()
		u.calls = append(u.calls, upstreamCall{ti.UserID, ti.Extra["token"].(string)})
		u.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + ti.UserID}}}, nil, nil
	})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		user, exp, err := v.Verify(ctx, token)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user.Subject, Expiration: exp, Extra: map[string]any{"token": token}}, nil
	}
	meta := u.ts.URL + "/.well-known/oauth-protected-resource/mcp"
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: u.url(), AuthorizationServers: []string{issuer},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	u.h = mux
	close(u.ready)
}

func (u *exchangeUpstream) seen() []upstreamCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamCall(nil), u.calls...)
}

// exchangeGateway serves identity with one server, "up", whose grant is
// token_exchange, logging at debug level to log, with its credential
// store and audit trail (with payloads) in its home.
func exchangeGateway(t *testing.T, up *exchangeUpstream, log *syncBuffer, stateless bool) (ig *identityGateway, creds string) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	home := t.TempDir()
	ig = newIdentityGatewayOpts(t, identityOpts{
		stateless: stateless,
		more:      map[string]any{"audit": map[string]any{"payloads": true}},
		servers: map[string]def{"up": {"url": up.url(), "oauth": map[string]any{
			"grant": "token_exchange", "clientId": idptest.GatewayClientID, "clientSecret": "${UP_CLIENT_SECRET}",
		}}},
		rules: []any{
			map[string]any{"group": "alpha", "tools": []string{"mcp__up__*"}},
			map[string]any{"group": "beta", "tools": []string{"mcp__up__*"}},
		},
		engine: switchboard.Options{
			Credentials: credstore.NewFile(filepath.Join(home, "credentials")),
			Logger:      logger,
			Lookup: func(k string) (string, bool) {
				if k == "UP_CLIENT_SECRET" {
					return idptest.GatewaySecret, true
				}
				return os.LookupEnv(k)
			},
		},
		logger: logger,
	})
	up.start(ig.idp.Issuer)
	return ig, home
}

func whoami(t *testing.T, cs *mcp.ClientSession) (string, bool) {
	t.Helper()
	return callText(t, cs, map[string]any{"tool": "whoami", "server": "up", "args": map[string]any{}})
}

// TestTokenExchange: two users signed in at a real OpenID provider call
// one server whose grant is token_exchange, with no login of their own.
// Each call reaches the server as its own user, with a token the provider
// issued for the server (its URL in the audience) in exchange for the
// user's token to the gateway; each user's token is exchanged once and
// then reused; A's exchanged token is never sent on B's call; the users'
// tokens to the gateway never reach the server.
func TestTokenExchange(t *testing.T) {
	t.Run("stateful", func(t *testing.T) { testTokenExchange(t, false) })
	t.Run("stateless", func(t *testing.T) { testTokenExchange(t, true) })
}

func testTokenExchange(t *testing.T, stateless bool) {
	up := newExchangeUpstream(t)
	log := &syncBuffer{}
	ig, creds := exchangeGateway(t, up, log, stateless)
	tokA := ig.idp.Token(t, idptest.Alpha, idptest.Password)
	tokB := ig.idp.Token(t, idptest.Beta, idptest.Password)
	a, b := ig.connectAs(t, tokA), ig.connectAs(t, tokB)

	for i, c := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{a, idptest.AlphaSub}, {b, idptest.BetaSub}, {a, idptest.AlphaSub}, {b, idptest.BetaSub}, {a, idptest.AlphaSub}} {
		out, isErr := whoami(t, c.cs)
		if isErr || out != "you are "+c.want {
			t.Fatalf("call %d: got %q (error %v), want the server to see %s", i, out, isErr, c.want)
		}
	}

	seen := up.seen()
	if len(seen) != 5 {
		t.Fatalf("the server saw %d calls, want 5", len(seen))
	}
	bySubject := map[string]map[string]bool{}
	for _, c := range seen {
		if c.token == tokA || c.token == tokB {
			t.Errorf("a user's own token to the gateway reached the server (call of %s)", c.subject)
		}
		if bySubject[c.subject] == nil {
			bySubject[c.subject] = map[string]bool{}
		}
		bySubject[c.subject][c.token] = true
	}
	for _, sub := range []string{idptest.AlphaSub, idptest.BetaSub} {
		if n := len(bySubject[sub]); n != 1 {
			t.Errorf("%s's calls carried %d tokens, want one, reused", sub, n)
		}
	}
	for tok := range bySubject[idptest.AlphaSub] {
		if bySubject[idptest.BetaSub][tok] {
			t.Error("A's exchanged token was sent on B's call")
		}
	}
	if got := ig.idp.Exchanges(t); got[idptest.AlphaSub] != 1 || got[idptest.BetaSub] != 1 || len(got) != 2 {
		t.Errorf("exchanges at the provider: %v, want one for each user", got)
	}
	canary(t, ig, creds, log, nil, tokA, tokB)
}

// TestTokenExchangeRefused: a user whose token the provider refuses to
// exchange gets needs-auth that says why, and no other token is used for
// them; another user of the same server is not affected; the refused
// user's token is not in the error; a user whose token to the gateway
// has expired is refused by the gateway, and nothing is exchanged.
func TestTokenExchangeRefused(t *testing.T) {
	up := newExchangeUpstream(t)
	log := &syncBuffer{}
	ig, creds := exchangeGateway(t, up, log, false)
	tokB := ig.idp.Token(t, idptest.Beta, idptest.Password)
	b := ig.connectAs(t, tokB)
	if out, isErr := whoami(t, b); isErr || out != "you are "+idptest.BetaSub {
		t.Fatalf("B's call: %q (error %v)", out, isErr)
	}

	tokA := ig.idp.Token(t, idptest.Alpha, idptest.Password, idptest.ScopeNoExchange)
	a := ig.connectAs(t, tokA)
	out, isErr := whoami(t, a)
	if !isErr || !strings.Contains(out, "needs-auth") || !strings.Contains(out, "refused to exchange") || !strings.Contains(out, "invalid_grant") {
		t.Fatalf("A's refused exchange: got %q (error %v), want needs-auth naming the refusal", out, isErr)
	}
	if strings.Contains(out, "auth login") {
		t.Errorf("the refusal sends the user to a login that cannot help: %q", out)
	}
	for _, c := range up.seen() {
		if c.subject != idptest.BetaSub {
			t.Errorf("a call reached the server as %s after A's exchange was refused", c.subject)
		}
	}
	if out, isErr := whoami(t, b); isErr || out != "you are "+idptest.BetaSub {
		t.Fatalf("B's call after A's refusal: %q (error %v)", out, isErr)
	}
	// A user whose token to the gateway has expired is refused there
	// (401), before anything is exchanged.
	expired := ig.idp.Token(t, idptest.Beta, idptest.Password, idptest.ScopeExpired)
	tr := &mcp.StreamableClientTransport{Endpoint: ig.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{expired}}}
	if cs, err := mcp.NewClient(&mcp.Implementation{Name: "expired", Version: "1"}, nil).Connect(t.Context(), tr, nil); err == nil {
		cs.Close()
		t.Error("a client with an expired token connected")
	}
	if got := ig.idp.Exchanges(t); got[idptest.AlphaSub] != 0 || got[idptest.BetaSub] != 1 {
		t.Errorf("exchanges at the provider: %v, want B's one", got)
	}
	canary(t, ig, creds, log, []string{out}, tokA, tokB, expired)
}

// canary checks that the users' tokens to the gateway appear nowhere the
// gateway writes: its log, the files of its home (audit trail, catalog,
// credential store), its call records, and the errors given.
func canary(t *testing.T, ig *identityGateway, creds string, log *syncBuffer, errs []string, tokens ...string) {
	t.Helper()
	calls, _ := json.Marshal(ig.calls.Recent())
	places := map[string]string{"the log": log.String(), "the call records": string(calls)}
	for i, e := range errs {
		places[fmt.Sprintf("error %d", i)] = e
	}
	for _, dir := range []string{ig.g.home, creds} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				places[path] = string(b)
			}
			return nil
		})
	}
	audited := false
	for _, text := range places {
		audited = audited || strings.Contains(text, `"whoami"`) && strings.Contains(text, idptest.BetaSub)
	}
	if !audited || log.String() == "" {
		t.Errorf("the canary checks nothing: an audit record of a call found %v, the log %d bytes", audited, len(log.String()))
	}
	for where, text := range places {
		for _, tok := range tokens {
			if strings.Contains(text, tok) {
				t.Errorf("a user's token to the gateway is in %s", where)
			}
		}
	}
}

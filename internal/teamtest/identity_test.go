package teamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/nginxtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestThreeReplicasIdentity is issue 34's team test: two people, signed in
// with a real OpenID provider, through a real nginx to three replicas of
// the real binary that share a store, stateless, so that their requests
// spread over all three. Each may call only the servers a rule grants
// their group, on whichever replica a request lands; a call under a rule
// with approvers waits on one replica while the approver, whose requests
// land anywhere, lists and allows it, and the shared audit trail names
// both people.
func TestThreeReplicasIdentity(t *testing.T) {
	nginxtest.Path(t)
	storeSettings, storeEnv := sharedStore(t)
	mcptest.CheckNoLeaks(t)
	const audience = "https://team.example/mcp" // the address clients know the team's gateway by
	idp := idptest.Start(t, audience)
	upTokens := &oauthtest.TokenLog{}
	api := oauthtest.New(t, oauthtest.Options{Wrap: upTokens.Wrap}) // an OAuth server: each person logs in (perUser)
	settings := map[string]any{"identity": map[string]any{
		"issuer": idp.Issuer, "audience": audience, "adminGroup": "admins",
		"rules": []any{
			map[string]any{"group": "alpha", "tools": []string{"mcp__a__*", "mcp__c__*", "mcp__api__*"}},
			map[string]any{"group": "beta", "tools": []string{"mcp__b__*", "mcp__c__*", "mcp__api__*"}},
		},
	}}
	for k, v := range storeSettings {
		settings[k] = v
	}
	guarded := fixtureServer()
	guarded["approve"] = map[string]any{"when": "always", "approvers": []string{"admins"}}
	c := newCluster(t, 3, map[string]any{"a": fixtureServer(), "b": fixtureServer(), "c": guarded, "api": map[string]any{"url": api.URL()}}, settings, storeEnv)
	for _, r := range c.replicas {
		r.stateless = true
	}
	c.startAll()
	lb := startNginx(t, c.replicas...)

	alphaTok := idp.Token(t, idptest.Alpha, idptest.Password)
	betaTok := idp.Token(t, idptest.Beta, idptest.Password)
	connectWith := func(token string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: bearer{token}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "teamtest", Version: "1"}, opts).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: lb.URL("/mcp"), HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	connect := func(token string) *mcp.ClientSession { return connectWith(token, nil) }
	echoText := func(cs *mcp.ClientSession, server, text string) (string, bool, error) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"server": server, "tool": "echo", "args": map[string]any{"text": text}}})
		if err != nil {
			return "", false, err
		}
		return mcptest.Text(res), res.IsError, nil
	}
	echo := func(cs *mcp.ClientSession, server string) (string, bool, error) { return echoText(cs, server, "hi") }
	alpha, beta := connect(alphaTok), connect(betaTok)
	waitApproval := func(url string, done <-chan error) string {
		t.Helper()
		for { // each look is a request
			var body struct {
				Approvals []struct{ ID, Requester string }
			}
			if code := adminDo(t, url, alphaTok, "GET", "", &body); code != http.StatusOK {
				t.Fatalf("GET %s as alpha: HTTP %d", url, code)
			}
			if len(body.Approvals) > 0 {
				return body.Approvals[0].ID
			}
			select {
			case err := <-done:
				t.Fatalf("beta's call ended without waiting for an approver: %v", err)
			default:
			}
		}
	}

	t.Run("each their own servers", func(t *testing.T) {
		before := callsPerReplica(t, c, alphaTok)
		for i := range 9 { // stateless: nginx spreads them over the three
			for _, tc := range []struct {
				who        string
				cs         *mcp.ClientSession
				own, other string
			}{{"alpha", alpha, "a", "b"}, {"beta", beta, "b", "a"}} {
				if text, isErr, err := echo(tc.cs, tc.own); err != nil || isErr || text != "hi" {
					t.Fatalf("round %d: %s calling their own server %s: %q, error result %v, %v", i, tc.who, tc.own, text, isErr, err)
				}
				if text, isErr, err := echo(tc.cs, tc.other); err != nil || !isErr || text == "hi" {
					t.Fatalf("round %d: %s calling %s, which no rule of theirs grants: %q, error result %v, %v", i, tc.who, tc.other, text, isErr, err)
				}
			}
		}
		after := callsPerReplica(t, c, alphaTok)
		for name, n := range after {
			if n == before[name] {
				t.Errorf("replica %s served none of the calls: nginx did not spread them (%v → %v)", name, before, after)
			}
		}
	})

	t.Run("an approver on any replica", func(t *testing.T) {
		type answer struct {
			text  string
			isErr bool
			err   error
		}
		done := make(chan answer, 1)
		go func() {
			text, isErr, err := echo(beta, "c")
			done <- answer{text, isErr, err}
		}()
		var id string
		for id == "" { // each look is a request through nginx, to any replica
			var body struct {
				Approvals []struct {
					ID, Requester, Server string
				}
			}
			if code := adminDo(t, lb.URL("/admin/approvals"), alphaTok, "GET", "", &body); code != http.StatusOK {
				t.Fatalf("GET /admin/approvals as alpha: HTTP %d", code)
			}
			if len(body.Approvals) > 0 {
				if a := body.Approvals[0]; a.Requester != idptest.BetaSub || a.Server != "c" {
					t.Errorf("pending approval %+v", a)
				}
				id = body.Approvals[0].ID
			}
			select {
			case a := <-done:
				t.Fatalf("beta's call ended without waiting for an approver: %+v", a)
			default:
			}
		}
		var none struct{ Approvals []any }
		if code := adminDo(t, lb.URL("/admin/approvals"), betaTok, "GET", "", &none); code != http.StatusOK || len(none.Approvals) != 0 {
			t.Errorf("beta, no approver, sees %d approvals (HTTP %d)", len(none.Approvals), code)
		}
		if code := adminDo(t, lb.URL("/admin/approvals/"+id), alphaTok, "POST", `{"decision": "allow"}`, nil); code != http.StatusOK {
			t.Fatalf("alpha allowing: HTTP %d", code)
		}
		if a := <-done; a.err != nil || a.isErr || a.text != "hi" {
			t.Fatalf("beta's call after alpha allowed it: %+v", a)
		}

		db, err := pgstore.Open(t.Context(), strings.TrimPrefix(storeEnv[0], "DATABASE_URL="))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		audit, err := policy.OpenPostgresAudit(t.Context(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		trail, err := audit.Read(t.Context(), policy.Filter{Server: "c"})
		if err != nil {
			t.Fatal(err)
		}
		var approvals []string
		for _, r := range trail.Records {
			if r.Event == policy.EventApproval {
				approvals = append(approvals, fmt.Sprintf("%s by %s for %s", r.Decision, r.Approver, r.User))
			}
		}
		if want := "allow-once by " + idptest.AlphaSub + " for " + idptest.BetaSub; len(approvals) != 1 || approvals[0] != want {
			t.Errorf("the shared audit trail's approvals: %q, want [%s]", approvals, want)
		}
	})

	// Each person logs in to the OAuth server for themselves, through
	// whichever replica their requests land on, and is sent only their
	// own login URL; the tokens are the shared store's, each under its
	// user: a call carries its own user's token, never the other's.
	t.Run("each their own upstream login", func(t *testing.T) {
		aAsk, bAsk := oauthtest.NewAsker(true), oauthtest.NewAsker(false)
		a, b := connectWith(alphaTok, aAsk.Options()), connectWith(betaTok, bAsk.Options())
		if text, isErr, err := echoText(a, "api", "A1"); err != nil || isErr || text != "A1" {
			t.Fatalf("alpha's call, alpha logging in: %q %v %v", text, isErr, err)
		}
		if n := len(aAsk.Asked()); n != 1 {
			t.Fatalf("alpha was sent %d login URLs, want 1", n)
		}
		if text, isErr, err := echoText(b, "api", "B1"); err != nil || !isErr || !strings.Contains(text, "needs-auth") {
			t.Fatalf("beta's call before beta logged in: %q %v %v; want needs-auth", text, isErr, err)
		}
		if len(bAsk.Asked()) == 0 || len(aAsk.Asked()) != 1 {
			t.Fatalf("login URLs sent: alpha %d, beta %d; want beta's to beta alone", len(aAsk.Asked()), len(bAsk.Asked()))
		}
		bAsk.SetAccept(true)
		if text, isErr, err := echoText(b, "api", "B2"); err != nil || isErr || text != "B2" {
			t.Fatalf("beta's call, beta logging in: %q %v %v", text, isErr, err)
		}
		for i := range 6 { // over the replicas: each reads its user's token from the store
			if text, isErr, err := echoText(a, "api", fmt.Sprintf("A%d", i+2)); err != nil || isErr {
				t.Fatalf("alpha's call %d after beta logged in: %q %v %v", i+2, text, isErr, err)
			}
		}
		if n := len(aAsk.Asked()); n != 1 {
			t.Errorf("alpha was asked to log in %d times, want once", n)
		}
		tokA := upTokens.Tokens("A1")
		if len(tokA) != 1 || tokA[0] == "" {
			t.Fatalf("alpha's first call carried %q", tokA)
		}
		for _, text := range []string{"B1", "B2"} {
			for _, tok := range upTokens.Tokens(text) {
				if tok == tokA[0] {
					t.Errorf("beta's call %s carried alpha's token", text)
				}
			}
		}
		if got := upTokens.Tokens("B2"); len(got) != 1 || got[0] == "" {
			t.Errorf("beta's call carried %q, want beta's own token", got)
		}
		for i := range 6 {
			if got := upTokens.Tokens(fmt.Sprintf("A%d", i+2)); len(got) != 1 || got[0] != tokA[0] {
				t.Errorf("alpha's call A%d carried another token than alpha's", i+2)
			}
		}
	})

	// A decision is the store's before the call goes on: the replica that
	// took it may die at once, and the call waiting on another still
	// hears of it.
	t.Run("a decision outlives its replica", func(t *testing.T) {
		r1, r2 := c.replicas[0], c.replicas[1]
		hc := &http.Client{Transport: bearer{betaTok}}
		direct, err := mcp.NewClient(&mcp.Implementation{Name: "teamtest", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: r1.url("/mcp"), HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer direct.Close()
		type answer struct {
			text  string
			isErr bool
			err   error
		}
		done := make(chan answer, 1)
		failed := make(chan error, 1)
		go func() {
			text, isErr, err := echo(direct, "c")
			if err != nil {
				failed <- err
			}
			done <- answer{text, isErr, err}
		}()
		id := waitApproval(r2.url("/admin/approvals"), failed) // r2 lists r1's call
		if code := adminDo(t, r2.url("/admin/approvals/"+id), alphaTok, "POST", `{"decision": "allow"}`, nil); code != http.StatusOK {
			t.Fatalf("alpha allowing on r2: HTTP %d", code)
		}
		if err, _ := r2.signal(syscall.SIGKILL); err == nil {
			t.Errorf("replica %s exited cleanly after SIGKILL", r2.name)
		}
		if a := <-done; a.err != nil || a.isErr || a.text != "hi" {
			t.Fatalf("beta's call on r1 after r2 decided and died: %+v", a)
		}
		c.start(r2)
	})
}

// bearer sends each request with an access token.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// adminDo sends an admin request with token, decodes the answer into out
// (if set) and returns the status.
func adminDo(t *testing.T, url, token, method, body string, out any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// callsPerReplica returns how many calls each replica has served, by
// name, as an admin (token) reads them.
func callsPerReplica(t *testing.T, c *cluster, token string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range c.replicas {
		calls, _, err := r.countersAs(token)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, v := range calls {
			n += v
		}
		out[r.name] = n
	}
	return out
}

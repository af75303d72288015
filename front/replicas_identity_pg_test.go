package front

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/replicas"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// TestContinuationKeepsItsUser: with identity, a call suspended for a
// person's input belongs to that person on every replica. Alpha's call
// suspends on replica A; beta sends alpha's continuation, requestState
// and answer included, with beta's own token, to A directly and through
// B (which forwards it to A, naming beta, signed): both are refused, and
// the call stays alpha's. Alpha's own continuation, forwarded by B to A
// naming alpha, completes it with alpha's answer; the upstream saw one
// call, answered once.
func TestContinuationKeepsItsUser(t *testing.T) {
	pgtest.DSN(t) // the server, started before the leak check: it outlives the test
	mcptest.CheckNoLeaks(t)
	db := pgtest.DB(t)
	up := newAskServer(t)
	const audience = "https://team.example/mcp"
	idp := idptest.Start(t, audience)
	newIdentityReplica := func(id string) *httptest.Server {
		settings := map[string]any{"identity": map[string]any{"issuer": idp.Issuer, "audience": audience}}
		g := newGatewayWith(t, map[string]def{"up": {"url": up.url + "/mcp"}}, settings, Options{ReplicaID: id})
		var h http.Handler
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		t.Cleanup(ts.Close)
		reg, err := replicas.Open(t.Context(), db, id, ts.URL, testStoreKey)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { reg.Close() })
		if h, err = g.srv.Handler(HTTPOptions{Stateless: true, Identity: g.srv.cfg.Settings.Identity, Registry: reg, StoreKey: testStoreKey}); err != nil {
			t.Fatal(err)
		}
		return ts
	}
	a, b := newIdentityReplica("replica-a"), newIdentityReplica("replica-b")
	alphaTok := idp.Token(t, idptest.Alpha, idptest.Password)
	betaTok := idp.Token(t, idptest.Beta, idptest.Password)

	// replay sends req's body and headers as beta, to target.
	replay := func(req *http.Request, body []byte, target string) string {
		r, _ := http.NewRequestWithContext(t.Context(), "POST", target+"/mcp", bytes.NewReader(body))
		for k, v := range req.Header {
			r.Header[k] = v
		}
		r.Header.Set("Authorization", "Bearer "+betaTok)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return string(data)
	}
	au, _ := url.Parse(a.URL)
	bu, _ := url.Parse(b.URL)
	var replays []string
	lb := &userBalancer{token: alphaTok, first: au, second: bu, beforeContinuation: func(req *http.Request, body []byte) {
		replays = append(replays, replay(req, body, a.URL), replay(req, body, b.URL))
	}}
	cs := connectGraceHopper(t, b.URL, lb, nil)
	r := call(t, cs, "mcp", map[string]any{"tool": "ask", "server": "up"})
	if len(replays) != 2 {
		t.Fatalf("beta replayed %d times, want twice (the client made %d tool calls)", len(replays), lb.calls)
	}
	for i, got := range replays {
		if !strings.Contains(got, "belongs to another client session") || !strings.Contains(got, `"isError":true`) {
			t.Errorf("beta's replay %d of alpha's continuation (to %s): %s; want it refused", i, []string{"A", "B, forwarded to A"}[i], got)
		}
	}
	if r.IsError || text(r) != "hello Grace Hopper" {
		t.Errorf("alpha's continuation through B: %q (isError %v), want alpha's answer", text(r), r.IsError)
	}
	if up.began.Load() != 1 || up.completed.Load() != 1 {
		t.Errorf("the upstream saw %d calls begin and %d answered, want one of each", up.began.Load(), up.completed.Load())
	}
}

// userBalancer sends a client's requests, with its user's token, to two
// replicas: the first tools/call to first, the others to second; before
// the second tools/call (the continuation) goes, beforeContinuation sees
// it.
type userBalancer struct {
	token              string
	first, second      *url.URL
	beforeContinuation func(req *http.Request, body []byte)
	calls              int
}

func (b *userBalancer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	target := b.second
	if bytes.Contains(body, []byte(`"tools/call"`)) {
		b.calls++
		switch b.calls {
		case 1:
			target = b.first
		case 2:
			if b.beforeContinuation != nil {
				b.beforeContinuation(req, body)
			}
		}
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.URL.Host, req.Host = target.Host, target.Host
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

package front

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/replicas"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// askServer is an upstream MCP server over HTTP, shared by the replicas,
// whose tool "ask" asks the client for a name (an input request: the
// replicas reach it at 2026-07-28) and greets it. It counts the calls that
// began (no answer yet) and those that came back with the answer.
type askServer struct {
	url              string
	began, completed atomic.Int32
}

func newAskServer(t *testing.T) *askServer {
	a := &askServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for a name and greets it."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				a.began.Add(1)
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Message:         "Your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
				}}}, nil, nil
			}
			a.completed.Add(1)
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + name}}}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	a.url = ts.URL
	return a
}

// replica is one front server behind its own listener, registered in a
// shared registry. forwarded counts the requests other replicas forwarded
// to it, and leaked those of them that carried a client's credentials.
type replica struct {
	g                 *testGateway
	ts                *httptest.Server
	reg               *replicas.Registry
	forwarded, leaked atomic.Int32
}

// Keys derived from one store key, as every replica of a team derives them.
var (
	testStoreKey   = []byte("a store key of thirty-two bytes!")
	testForwardKey = pgstore.DeriveKey(testStoreKey, forwardKeyPurpose)
)

func newReplica(t *testing.T, id string, up *askServer, reg func(url string) *replicas.Registry) *replica {
	t.Helper()
	g := newGatewayWith(t, map[string]def{"up": {"url": up.url + "/mcp"}}, nil, Options{ReplicaID: id})
	var h http.Handler
	var r *replica
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(ForwardedHeader) != "" {
			r.forwarded.Add(1)
			if req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" {
				r.leaked.Add(1)
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	r = &replica{g: g, ts: ts, reg: reg(ts.URL)}
	var err error
	if h, err = g.srv.Handler(HTTPOptions{Stateless: true, Token: testToken, Registry: r.reg, StoreKey: testStoreKey}); err != nil {
		t.Fatal(err)
	}
	return r
}

const testToken = "a-token-of-twenty-four-b"

// balancer sends a client's requests to two replicas as a load balancer
// without affinity might: its first tools/call to first, the others to
// second. Once first has answered the first call, between is called.
type balancer struct {
	first, second *url.URL
	between       func()
	mu            sync.Mutex
	calls         int
}

func (b *balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	target := b.second
	b.mu.Lock()
	isCall := bytes.Contains(body, []byte(`"tools/call"`))
	if isCall {
		b.calls++
	}
	firstCall := isCall && b.calls == 1
	b.mu.Unlock()
	if firstCall {
		target = b.first
	}
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = target.Host, target.Host
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Cookie", "session=client-cookie")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !firstCall {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if b.between != nil {
		b.between()
	}
	return resp, nil
}

// connectGraceHopper connects a 2026-07-28 client to the gateway at base
// through rt, which answers every elicitation with the name Grace Hopper,
// counting them in elicited (if set).
func connectGraceHopper(t *testing.T, base string, rt http.RoundTripper, elicited *int) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if elicited != nil {
				*elicited++
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace Hopper"}}, nil
		}}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 or later", v)
	}
	return cs
}

// TestContinuationOnAnotherReplica: a 2026-07-28 client's call suspends on
// replica A (the upstream asks for input), and the client's continuation
// reaches replica B. B forwards it to A, which holds the call: the call
// completes, and the upstream saw it begin once. With A gone (deregistered
// as it stopped, or unreachable), B answers with an error that names A
// and says nothing was sent twice, and the upstream still saw one call.
func TestContinuationOnAnotherReplica(t *testing.T) {
	pgtest.DSN(t) // the server, started before the leak check: it outlives the test
	mcptest.CheckNoLeaks(t)
	for _, tc := range []struct {
		name string
		stop func(a *replica) // between the first call and its continuation
		want string
	}{
		{"owner-running", nil, "hello Grace Hopper"},
		{"owner-stopped", func(a *replica) { a.g.srv.Close(); a.ts.Close(); a.reg.Close() }, "it is not registered"},
		{"owner-unreachable", func(a *replica) { a.ts.Close() }, "which did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := pgtest.DB(t)
			up := newAskServer(t)
			reg := func(id string) func(string) *replicas.Registry {
				return func(url string) *replicas.Registry {
					r, err := replicas.Open(t.Context(), db, id, url, testStoreKey)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { r.Close() })
					return r
				}
			}
			a := newReplica(t, "replica-a", up, reg("replica-a"))
			b := newReplica(t, "replica-b", up, reg("replica-b"))
			if tc.stop == nil {
				// Forwarding is the owner's to authenticate, and only after the
				// receiving replica has: without the token nothing goes anywhere.
				req, _ := http.NewRequest("POST", b.ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp","arguments":{},"requestState":"sb1.replica-a.AAAAAAAAAAAAAAAAAAAAAA"}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("a continuation without the token: %d, want 401", resp.StatusCode)
				}
			}
			au, _ := url.Parse(a.ts.URL)
			bu, _ := url.Parse(b.ts.URL)
			lb := &balancer{first: au, second: bu}
			if tc.stop != nil {
				lb.between = func() { tc.stop(a) }
			}
			elicited := 0
			cs := connectGraceHopper(t, b.ts.URL, lb, &elicited)
			r := call(t, cs, "mcp", map[string]any{"tool": "ask", "server": "up"})
			if elicited != 1 || lb.calls != 2 {
				t.Fatalf("the client was asked %d times over %d tool calls; want once, and a continuation", elicited, lb.calls)
			}
			if tc.stop == nil {
				if r.IsError || text(r) != tc.want || up.completed.Load() != 1 {
					t.Errorf("continuation on B: %q (isError %v), upstream completed %d; want %q, once", text(r), r.IsError, up.completed.Load(), tc.want)
				}
				if a.forwarded.Load() != 1 || a.leaked.Load() != 0 {
					t.Errorf("A got %d forwarded requests, %d of them with the client's credentials; want 1, without", a.forwarded.Load(), a.leaked.Load())
				}
			} else {
				for _, want := range []string{"suspended on replica replica-a, which is no longer running", tc.want, "nothing was sent to the server twice", "call the tool again"} {
					if !r.IsError || !strings.Contains(text(r), want) {
						t.Errorf("continuation on B with A gone: %q (isError %v); want an error with %q", text(r), r.IsError, want)
					}
				}
				if n := up.completed.Load(); n != 0 {
					t.Errorf("the upstream got %d answers: want none", n)
				}
			}
			if n := up.began.Load(); n != 1 {
				t.Errorf("the upstream saw %d calls begin, want 1", n)
			}
		})
	}
}

// TestForwardingTrustsNoRecordAlone: what the registry says of a replica
// cannot make another replica send a client's request, let alone its
// credentials, elsewhere. A record written without the store's key (by
// anything that can write to the database) pointing at another server
// is ignored: the client gets an error, and that server gets nothing. A
// request that claims to be forwarded but is not signed with the forward
// key, or whose body is not the one signed, is refused.
func TestForwardingTrustsNoRecordAlone(t *testing.T) {
	pgtest.DSN(t)
	mcptest.CheckNoLeaks(t)
	db := pgtest.DB(t)
	up := newAskServer(t)
	var caught atomic.Int32
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { caught.Add(1) }))
	defer catcher.Close()
	b := newReplica(t, "replica-b", up, func(url string) *replicas.Registry {
		r, err := replicas.Open(t.Context(), db, "replica-b", url, testStoreKey)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
	if _, err := db.ExecContext(t.Context(), `INSERT INTO switchboard_replicas (id, url, mac) VALUES ('replica-x', $1, 'forged')`, catcher.URL); err != nil {
		t.Fatal(err)
	}
	post := func(body string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", b.ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	cont := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp","arguments":{},"requestState":"sb1.replica-x.AAAAAAAAAAAAAAAAAAAAAA"}}`
	code, body := post(cont, map[string]string{"Authorization": "Bearer " + testToken})
	if code != http.StatusOK || !strings.Contains(body, "not signed with the store") || !strings.Contains(body, `"isError":true`) {
		t.Errorf("a continuation for a forged replica: %d %s; want an error result that says its record is not signed", code, body)
	}
	if n := caught.Load(); n != 0 {
		t.Errorf("the server a forged record names got %d requests; want none", n)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	now := time.Now()
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		body string
	}{
		{"unsigned", map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: "1.2.3"}, list},
		{"another key", map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: signForward(pgstore.DeriveKey([]byte("another key of thirty-two bytes!"), forwardKeyPurpose), "replica-a", "replica-b", now, []byte(list), "")}, list},
		{"for another replica", map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-c", now, []byte(list), "")}, list},
		{"stale", map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-b", now.Add(-2*forwardSkew), []byte(list), "")}, list},
		// A user named beside a signature made for none (or for another):
		// only a replica of the team can say whom a request is from.
		{"a user added", map[string]string{ForwardedHeader: "replica-a", ForwardedUserHeader: encodeForwardedUser(&identity.User{Subject: "admin"}),
			ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-b", now, []byte(list), "")}, list},
		{"another user", map[string]string{ForwardedHeader: "replica-a", ForwardedUserHeader: encodeForwardedUser(&identity.User{Subject: "admin"}),
			ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-b", now, []byte(list), encodeForwardedUser(&identity.User{Subject: "beta"}))}, list},
	} {
		if code, body := post(tc.body, tc.hdr); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s; want 401", tc.name, code, body)
		}
	}
	// Signed for one body, sent with another: the body's read fails.
	other := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if code, body := post(other, map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-b", now, []byte(list), "")}); code == http.StatusOK {
		t.Errorf("a signed header with another body: %d %s; want refused", code, body)
	}
	// Signed as the team signs, it is taken without a token.
	if code, body := post(list, map[string]string{ForwardedHeader: "replica-a", ForwardAuthHeader: signForward(testForwardKey, "replica-a", "replica-b", now, []byte(list), "")}); code != http.StatusOK || !strings.Contains(body, `"mcp"`) {
		t.Errorf("a request signed by a replica of the team: %d %s; want the tools", code, body)
	}
}

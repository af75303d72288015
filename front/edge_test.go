package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const edgeToken = "0123456789abcdef0123456789abcdef"

// failsafe bounds how long a raw connection may wait for the server: a
// server that holds a connection it should have closed fails the test then,
// instead of hanging it. It is not what the tests measure.
const failsafe = 30 * time.Second

// rawDial opens a connection to ts for requests written by hand.
func rawDial(t *testing.T, ts *httptest.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(failsafe))
	t.Cleanup(func() { c.Close() })
	return c
}

// answered reads the server's answer on c, and checks that the server
// then closes the connection.
func answered(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after a %d: %v, want the server to close the connection", resp.StatusCode, err)
	}
	return resp, string(body)
}

// TestHTTPRefusesBeforeTheBody sends requests that declare a body and send
// one byte of it, without the token, or with a foreign Host or Origin: each
// is refused at once, without the server waiting for the body, and its
// connection closed. (2,000 such clients held a token-protected gateway open
// for as long as they liked.)
func TestHTTPRefusesBeforeTheBody(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: edgeToken, Metrics: NewMetrics(), Admin: &Admin{}})
	host := ts.Listener.Addr().String()
	auth := "Authorization: Bearer " + edgeToken + "\r\n"
	for _, tc := range []struct {
		name, path, headers string
		want                int
	}{
		{"no token", "/mcp", "", http.StatusUnauthorized},
		{"wrong token", "/mcp", "Authorization: Bearer nope\r\n", http.StatusUnauthorized},
		{"foreign host", "/mcp", auth + "X-Host: evil.example\r\n", http.StatusForbidden},
		{"foreign origin", "/mcp", auth + "Origin: http://evil.example\r\n", http.StatusForbidden},
		{"metrics, no token", "/metrics", "", http.StatusUnauthorized},
		{"admin, no token", "/admin/reconnect?server=f", "", http.StatusUnauthorized},
		{"readyz, foreign host", "/readyz", "X-Host: evil.example\r\n", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawDial(t, ts)
			h := host
			headers := tc.headers
			if strings.Contains(headers, "X-Host: ") {
				h = "evil.example"
				headers = strings.ReplaceAll(headers, "X-Host: evil.example\r\n", "")
			}
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n%s\r\n{", tc.path, h, headers)
			resp, _ := answered(t, c)
			if resp.StatusCode != tc.want {
				t.Errorf("got %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// TestHTTPDeclaredBodyTooLarge declares a 100 MiB body and sends none of
// it: the server refuses it at once (413, a JSON-RPC error saying why) and
// closes the connection, without waiting for the body.
func TestHTTPDeclaredBodyTooLarge(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: edgeToken})
	c := rawDial(t, ts)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", ts.Listener.Addr(), edgeToken, 100<<20)
	resp, body := answered(t, c)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "over the limit of 4194304") {
		t.Errorf("got %d %q, want 413 saying the body is over the limit", resp.StatusCode, body)
	}
}

// TestHTTPBodyTooLargeAsItComes sends a chunked body (no declared length)
// over the limit: it is refused once the limit is passed, with a JSON-RPC
// error for the request's id, and the connection closed.
func TestHTTPBodyTooLargeAsItComes(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: edgeToken, MaxBodyBytes: 64 << 10})
	c := rawDial(t, ts)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n", ts.Listener.Addr(), edgeToken)
	chunk := `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"mcp","arguments":{"search":"` + strings.Repeat("x", 100<<10)
	fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk)
	resp, body := answered(t, c)
	var m struct {
		ID    int
		Error struct{ Message string }
	}
	json.Unmarshal([]byte(body), &m)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || m.ID != 41 || !strings.Contains(m.Error.Message, "over the limit of 65536 bytes") {
		t.Errorf("got %d %q, want 413 with an error for id 41 saying the body is over the limit", resp.StatusCode, body)
	}
}

// TestHTTPSlowBody sends, with the token, a body that never ends: once the
// body deadline (set short here: it is the knob, not a measurement) has
// passed, the request is refused (408) and its connection closed.
func TestHTTPSlowBody(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: edgeToken, BodyTimeout: 50 * time.Millisecond})
	c := rawDial(t, ts)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", ts.Listener.Addr(), edgeToken)
	resp, body := answered(t, c)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive in time") {
		t.Errorf("got %d %q, want 408 saying the body did not arrive in time", resp.StatusCode, body)
	}
}

// deepArgs nests n levels of arrays, as a model can write them.
func deepArgs(n int) any {
	var v any = []any{}
	for range n - 1 {
		v = []any{v}
	}
	return v
}

// TestHTTPDeepRequest calls, over HTTP, with arguments nested 1,000 levels
// deep: the call is refused with a JSON-RPC error that says why, which
// go-sdk's client takes as that call's error, and the session goes on (a
// plain-text 400 ended the client's connection), on the fast lane and off
// it, in proxy and transparent mode, with sessions and without.
func TestHTTPDeepRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]any
		opts     HTTPOptions
		tool     string
	}{
		{"proxy", nil, HTTPOptions{}, "mcp"},
		{"proxy, no fast lane", nil, HTTPOptions{NoFastLane: true}, "mcp"},
		{"proxy, stateless", nil, HTTPOptions{Stateless: true}, "mcp"},
		{"transparent", map[string]any{"toolPrefix": "none"}, HTTPOptions{}, "echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, map[string]def{"f": fixture()}, tc.settings)
			ts := g.serveHTTP(t, tc.opts)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"search": deepArgs(1000)}})
			if err == nil || !strings.Contains(err.Error(), "nests deeper than 1000 levels") {
				t.Fatalf("a deep call: %v, want it refused for nesting deeper than 1000 levels", err)
			}
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatalf("the session after the refusal: %v", err)
			}
		})
	}
}

// TestHTTPMalformedRequest posts messages go-sdk refuses: each gets a
// JSON-RPC error for its id that says why (go-sdk's own refusal, in plain
// text, would end a go-sdk client's connection).
func TestHTTPMalformedRequest(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{})
	for _, tc := range []struct {
		body, id, reason string
		code             float64
	}{
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":`, "6", "not valid JSON", -32700},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, "7", "invalid message version tag", -32600},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct {
			ID    json.RawMessage
			Error struct {
				Code    float64
				Message string
			}
		}
		json.Unmarshal(body, &m)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || string(m.ID) != tc.id || m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.reason) {
			t.Errorf("%s: got %d %s %q, want 400 with a JSON-RPC error %v for id %s saying %q", tc.body, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.code, tc.id, tc.reason)
		}
	}
}

// TestHTTPIdleTimeout leaves a kept-alive connection idle: Serve closes it
// once the idle timeout (set short here: it is the knob) has passed.
func TestHTTPIdleTimeout(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	h, err := g.srv.Handler(HTTPOptions{IdleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(ctx, ln, h, 0) }()
	defer func() { cancel(); <-served }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(failsafe))
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", ln.Addr())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if resp.Close {
		t.Fatal("the server closed the connection after one request: want it kept alive, then closed when idle")
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("an idle connection: %v, want the server to close it", err)
	}
}

// TestHTTPChecksHostOfEveryRoute asks /metrics and /readyz with a foreign
// Host (a page that rebound its name to 127.0.0.1) or Origin: refused, as
// on /mcp, since /metrics names the servers and counts their calls.
func TestHTTPChecksHostOfEveryRoute(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: edgeToken, Metrics: NewMetrics()})
	for _, path := range []string{"/metrics", "/readyz"} {
		for _, tc := range []struct{ name, host, origin string }{
			{"rebound host", "evil.example", ""},
			{"foreign origin", "", "http://evil.example"},
		} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+edgeToken)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s, %s: got %d %.100q, want 403", path, tc.name, resp.StatusCode, body)
			}
		}
	}
}

// TestReadyzSaysNoDetail makes the store unreachable: /readyz says not
// ready, and nothing of the error (the database's host, user and name),
// which goes to the log.
func TestReadyzSaysNoDetail(t *testing.T) {
	var log strings.Builder
	g := newGatewayWith(t, map[string]def{"f": fixture()}, nil, Options{Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil))})
	secret := errors.New(`failed to connect to user=alice database=prod host=db.internal: connection refused`)
	ts := g.serveHTTP(t, HTTPOptions{Ready: func(context.Context) error { return secret }})
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), "not ready") {
		t.Errorf("got %d %q, want 503 not ready", resp.StatusCode, body)
	}
	for _, s := range []string{"alice", "prod", "db.internal"} {
		if strings.Contains(string(body), s) {
			t.Errorf("/readyz says %q, which names %q", body, s)
		}
	}
	if !strings.Contains(log.String(), "db.internal") {
		t.Errorf("the log has %q, want the error", log.String())
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

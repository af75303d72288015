package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A seen records the requests an HTTP server got, by method.
type seen struct {
	mu      sync.Mutex
	methods map[string]int
	noAuth  int // requests without the Authorization header the test gives
}

func (s *seen) note(r *http.Request, auth string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.methods == nil {
		s.methods = map[string]int{}
	}
	s.methods[r.Method]++
	if auth != "" && r.Header.Get("Authorization") != auth {
		s.noAuth++
	}
}

func (s *seen) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.methods[method]
}

// legacySSEServer returns a go-sdk server of the 2024-11-05 revision's
// HTTP+SSE transport alone, with an echo tool, that rejects Streamable
// HTTP's POST (a POST without the session its event stream names) with
// status, as such servers do. It records what it was asked, and whether
// each request carried the Authorization header auth ("" for none).
func legacySSEServer(t *testing.T, status int, auth string) (*httptest.Server, *seen) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var got seen
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.note(r, auth)
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			http.Error(w, "method not allowed", status)
			return
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &got
}

// answering returns a server that answers every request with status and a
// body of content type ctype, recording what it was asked.
func answering(t *testing.T, status int, ctype, body string) (*httptest.Server, *seen) {
	var got seen
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.note(r, "")
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts, &got
}

func httpServer(name, url string, inferred bool) *config.Server {
	return &config.Server{Name: name, Type: config.TransportHTTP, TypeInferred: inferred, URL: url,
		ProtocolVersion: "auto", RequestTimeout: 20 * time.Second}
}

// A server defined by a "url" without a "type" whose URL rejects
// Streamable HTTP's POST outright is tried over legacy SSE, with the same
// headers, and works; status says why it is reached over SSE.
func TestUntypedURLFallsBackToSSE(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusUnsupportedMediaType} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			const token = "Bearer fallback-t0ken"
			ts, got := legacySSEServer(t, status, token)
			s := httpServer("legacy", ts.URL, true)
			s.Headers = map[string]string{"Authorization": "${TOKEN}"}
			lookup := func(name string) (string, bool) { return token, name == "TOKEN" }
			h := newPool(t, []*config.Server{s}, &upstream.Options{Lookup: lookup})

			text, err := h.call(t.Context(), "legacy", "echo", map[string]any{"text": "over sse"})
			if err != nil || text != "over sse" {
				t.Fatalf("call: %q, %v; want the echo over legacy SSE", text, err)
			}
			want := "connected over legacy SSE: the URL rejected Streamable HTTP (HTTP " + strconv.Itoa(status) + ")"
			if st := h.status("legacy"); st.Fallback != want {
				t.Errorf("status says %q; want %q", st.Fallback, want)
			}
			if got.count(http.MethodGet) == 0 {
				t.Errorf("the event stream was never asked for")
			}
			if got.noAuth != 0 {
				t.Errorf("%d requests went without the server's headers", got.noAuth)
			}
		})
	}
}

// What a URL answers when it does not speak MCP is said plainly, naming
// the URL's origin alone; only a definitive rejection of an untyped URL's
// POST is tried over legacy SSE, and a server whose type is written is
// never tried another way.
func TestURLThatDoesNotSpeakMCP(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		ctype    string
		inferred bool
		class    upstream.Class
		want     string
		gets     bool // legacy SSE's GET is tried
	}{
		{name: "html", status: 200, ctype: "text/html; charset=utf-8", inferred: true, class: upstream.ClassConfig,
			want: `does not speak MCP: it answered an HTML page (HTTP 200, text/html); check the URL (the MCP endpoint is often /mcp`},
		{name: "html typed", status: 200, ctype: "text/html", class: upstream.ClassConfig,
			want: `does not speak MCP: it answered an HTML page (HTTP 200, text/html)`},
		{name: "plain text", status: 200, ctype: "text/plain", inferred: true, class: upstream.ClassConfig,
			want: `does not speak MCP: it answered HTTP 200 with content type "text/plain" to Streamable HTTP's POST`},
		{name: "server error", status: 500, ctype: "text/plain", inferred: true, class: upstream.ClassServer,
			want: `failed: it answered HTTP 500 Internal Server Error to Streamable HTTP's POST; try again later`},
		{name: "typed 404", status: 404, ctype: "text/plain", class: upstream.ClassConfig,
			want: `does not take Streamable HTTP: it answered HTTP 404 Not Found to Streamable HTTP's POST; check the URL (the MCP endpoint is often /mcp, or /sse for a legacy SSE server); for a legacy SSE server, write "type": "sse"`},
		{name: "untyped 404 both", status: 404, ctype: "text/plain", inferred: true, class: upstream.ClassConfig, gets: true,
			want: `does not speak MCP: it answered HTTP 404 Not Found to Streamable HTTP's POST, and HTTP 404 Not Found to legacy SSE's GET; check the URL`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, got := answering(t, c.status, c.ctype, "<html><body>Welcome</body></html>")
			h := newPool(t, []*config.Server{httpServer("x", ts.URL+"/app", c.inferred)}, nil)
			_, err := h.Tools(t.Context(), "x")
			if err == nil {
				t.Fatal("listing tools worked; want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"x"`) || !strings.Contains(msg, ts.URL+" "+c.want) {
				t.Errorf("error:\n%s\nwant it to name the server and say:\n%s %s", msg, ts.URL, c.want)
			}
			if strings.Contains(msg, "unsupported content type") || strings.Contains(msg, "/app") {
				t.Errorf("error %q: want no go-sdk wording, and the origin alone", msg)
			}
			var ue *upstream.Error
			if !errors.As(err, &ue) || ue.Class != c.class {
				t.Errorf("error class: %+v; want %s", ue, c.class)
			}
			if st := h.status("x"); !strings.Contains(st.Error, c.want) {
				t.Errorf("status error %q; want %q", st.Error, c.want)
			}
			if n := got.count(http.MethodGet); (n > 0) != c.gets {
				t.Errorf("%d GETs of the event stream; want legacy SSE tried: %v", n, c.gets)
			}
		})
	}
}

// An authorization failure is not a rejection of Streamable HTTP: it
// keeps its own handling, and legacy SSE is not tried.
func TestUntypedURLAuthIsNotFallback(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			ts, got := answering(t, status, "text/plain", "no")
			h := newPool(t, []*config.Server{httpServer("x", ts.URL, true)}, nil)
			_, err := h.Tools(t.Context(), "x")
			if err == nil || strings.Contains(err.Error(), "does not speak MCP") || strings.Contains(err.Error(), "legacy SSE") {
				t.Errorf("error %v; want today's authorization error", err)
			}
			if status == http.StatusUnauthorized && !errors.Is(err, upstream.ErrNeedsAuth) {
				t.Errorf("error %v; want needs-auth", err)
			}
			if n := got.count(http.MethodGet); n != 0 {
				t.Errorf("%d GETs of an event stream; want no fallback", n)
			}
		})
	}
}

// A URL may carry a token in its query, path or user information: the
// errors name its origin alone, whichever way the connection failed.
func TestNotMCPErrorHidesURL(t *testing.T) {
	const secret = "qu3ry-s3cr3t"
	for _, status := range []int{200, 404, 500} {
		ts, _ := answering(t, status, "text/html", "<html></html>")
		lookup := func(name string) (string, bool) { return secret, name == "KEY" }
		servers := []*config.Server{
			httpServer("literal", ts.URL+"/mcp/"+secret+"?token="+secret, true),
			httpServer("ref", ts.URL+"/mcp?token=${KEY}", true),
			httpServer("userinfo", strings.Replace(ts.URL, "://", "://token:"+secret+"@", 1)+"/mcp", true),
		}
		h := newPool(t, servers, &upstream.Options{Lookup: lookup})
		for _, s := range servers {
			_, err := h.Tools(t.Context(), s.Name)
			if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "token") {
				t.Errorf("HTTP %d, %s: error %v; want one without the URL's path and query", status, s.Name, err)
			}
			if st := h.status(s.Name); strings.Contains(st.Error, secret) {
				t.Errorf("HTTP %d, %s: status error %q holds the secret", status, s.Name, st.Error)
			}
		}
	}
}

package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/upstream"
)

// goServer returns an in-process go-sdk Streamable HTTP server with an echo
// tool, wrapped by wrap if not nil.
func goServer(t *testing.T, wrap func(http.Handler) http.Handler) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "go", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func TestHTTPHeadersAndSecrets(t *testing.T) {
	const token = "s3cr3t-t0ken-value"
	ts := goServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	lookup := func(name string) (string, bool) {
		if name == "TOKEN" {
			return token, true
		}
		return "", false
	}
	good := &config.Server{Name: "good", Type: config.TransportHTTP, URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}, ProtocolVersion: "auto"}
	noauth := &config.Server{Name: "noauth", Type: config.TransportHTTP, URL: ts.URL, ProtocolVersion: "auto"}
	refused := &config.Server{Name: "refused", Type: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp?key=${TOKEN}",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}, RequestTimeout: 5 * time.Second}
	unset := &config.Server{Name: "unset", Type: config.TransportHTTP, URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer ${MISSING}"}}
	h := newPool(t, []*config.Server{good, noauth, refused, unset}, &upstream.Options{Lookup: lookup})

	if got, err := h.call(t.Context(), "good", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
		t.Errorf("with the header: %q, %v", got, err)
	}
	_, err := h.Tools(t.Context(), "noauth")
	if !errors.Is(err, upstream.ErrNeedsAuth) || h.status("noauth").State != upstream.StateNeedsAuth {
		t.Errorf("without the header: err = %v, state %s; want needs-auth", err, h.status("noauth").State)
	}
	_, err = h.Tools(t.Context(), "refused")
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(h.status("refused").Error, token) {
		t.Errorf("refused: err = %v: want an error without the secret", err)
	}
	_, err = h.Tools(t.Context(), "unset")
	if !errors.Is(err, config.ErrReference) || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("unset reference: err = %v", err)
	}
	for _, st := range h.Snapshot() {
		if strings.Contains(st.Error, token) {
			t.Errorf("status of %s holds the secret: %s", st.Name, st.Error)
		}
	}
}

// TestHTTPDrop checks that a server that goes away is noticed at the next
// operation, which fails at once, and that the pool connects again later.
func TestHTTPDrop(t *testing.T) {
	ts := goServer(t, nil)
	s := &config.Server{Name: "go", Type: config.TransportHTTP, URL: ts.URL, RequestTimeout: 10 * time.Second}
	h := newPool(t, []*config.Server{s}, nil)
	if _, err := h.call(t.Context(), "go", "echo", nil); err != nil {
		t.Fatal(err)
	}
	ts.CloseClientConnections()
	ts.Close()
	start := time.Now()
	_, err := h.call(t.Context(), "go", "echo", nil)
	var e *upstream.Error
	if !errors.As(err, &e) || e.Class != upstream.ClassTransport {
		t.Fatalf("after the server went away: err = %v, want a transport error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the failure took %s", d)
	}
	h.waitFor("go", "failed", func(st upstream.Status) bool { return st.State != upstream.StateConnected })
	_, err = h.call(t.Context(), "go", "echo", nil)
	if err == nil || !strings.Contains(err.Error(), `connecting "go"`) {
		t.Errorf("next call: err = %v, want a new connection attempt", err)
	}
}

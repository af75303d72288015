package upstream_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
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

// TestHTTPAuthAfterConnect checks that a 401, or a 403 insufficient_scope,
// that arrives after connecting is an auth error that makes the server
// needs-auth, and that the state clears once the server answers again.
func TestHTTPAuthAfterConnect(t *testing.T) {
	var refuse atomic.Int32 // 0 answer, 401 or 403
	ts := goServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch refuse.Load() {
			case http.StatusUnauthorized:
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcp", error="invalid_token"`)
				http.Error(w, "token revoked", http.StatusUnauthorized)
			case http.StatusForbidden:
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="repo read:org"`)
				http.Error(w, "forbidden", http.StatusForbidden)
			default:
				next.ServeHTTP(w, r)
			}
		})
	})
	s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: ts.URL, RequestTimeout: 10 * time.Second, ProtocolVersion: "auto"}
	h := newPool(t, []*config.Server{s}, nil)
	answers := func(when string) {
		t.Helper()
		if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
			t.Fatalf("%s: echo = %q, %v", when, got, err)
		}
		if st := h.status("api"); st.State != upstream.StateConnected {
			t.Errorf("%s: state %s, want connected", when, st.State)
		}
	}
	answers("at first")
	for _, tt := range []struct {
		code int
		want []string
	}{
		{http.StatusUnauthorized, []string{`calling "echo" on "api"`, "HTTP 401 Unauthorized", "hint: give it credentials"}},
		{http.StatusForbidden, []string{"HTTP 403 Forbidden: insufficient_scope", `scope "repo read:org"`, "hint: give it a token with that scope"}},
	} {
		refuse.Store(int32(tt.code))
		_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"})
		if !errors.Is(err, upstream.ErrNeedsAuth) {
			t.Fatalf("after HTTP %d: err = %v, want ErrNeedsAuth", tt.code, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("after HTTP %d: error %q lacks %q", tt.code, err, w)
			}
		}
		st := h.status("api")
		if st.State != upstream.StateNeedsAuth || st.ErrorClass != upstream.ClassAuth || st.Error != err.Error() {
			t.Errorf("after HTTP %d: status %+v, want needs-auth with the error", tt.code, st)
		}
		refuse.Store(0)
		answers(fmt.Sprintf("after HTTP %d, once it answers again", tt.code))
	}
}

// TestHTTPInsufficientScopeAtConnect checks that a 403 insufficient_scope
// while connecting is an auth error too, and that a plain 403 is not.
func TestHTTPInsufficientScopeAtConnect(t *testing.T) {
	forbid := func(challenge string) *httptest.Server {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if challenge != "" {
				w.Header().Set("WWW-Authenticate", challenge)
			}
			http.Error(w, "forbidden", http.StatusForbidden)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	scope := &config.Server{Name: "scope", Type: config.TransportHTTP, URL: forbid(`Bearer error="insufficient_scope", scope="tools"`).URL, ProtocolVersion: "legacy"}
	plain := &config.Server{Name: "plain", Type: config.TransportHTTP, URL: forbid("").URL, ProtocolVersion: "legacy"}
	h := newPool(t, []*config.Server{scope, plain}, nil)
	_, err := h.Tools(t.Context(), "scope")
	if !errors.Is(err, upstream.ErrNeedsAuth) || !strings.Contains(err.Error(), `insufficient_scope (it asks for scope "tools")`) {
		t.Errorf("403 insufficient_scope: err = %v, want ErrNeedsAuth naming the scope", err)
	}
	if st := h.status("scope"); st.State != upstream.StateNeedsAuth {
		t.Errorf("403 insufficient_scope: state %s, want needs-auth", st.State)
	}
	_, err = h.Tools(t.Context(), "plain")
	if err == nil || errors.Is(err, upstream.ErrNeedsAuth) || h.status("plain").State != upstream.StateFailed {
		t.Errorf("plain 403: err = %v, state %s; want a failure that is not needs-auth", err, h.status("plain").State)
	}
}

package upstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/oauth"
)

func follow(ctx context.Context, _, authURL string) (string, error) {
	_, err := oauthtest.Follow(ctx, authURL)
	return "", err
}

// TestOAuthNeedsLogin: a server that needs an OAuth login is needs-auth,
// with the command to run; after Login, the next use connects with the
// token. Streamable HTTP and SSE alike.
func TestOAuthNeedsLogin(t *testing.T) {
	for _, typ := range []config.Transport{config.TransportHTTP, config.TransportSSE} {
		t.Run(string(typ), func(t *testing.T) {
			as := oauthtest.New(t, oauthtest.Options{SSE: typ == config.TransportSSE})
			s := &config.Server{Name: "api", Type: typ, URL: as.URL(), RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
			h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir())})
			_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"})
			if !errors.Is(err, upstream.ErrNeedsAuth) || !errors.Is(err, oauth.ErrNeedsLogin) ||
				!strings.Contains(err.Error(), `connecting "api": needs-auth: the server requires an OAuth login; hint: switchboard auth login api`) {
				t.Fatalf("before login: %v", err)
			}
			if st := h.status("api"); st.State != upstream.StateNeedsAuth {
				t.Errorf("state %s, want needs-auth", st.State)
			}
			if c := as.Counts(); c.Registrations != 0 {
				t.Errorf("the connection registered a client (%+v) without a login", c)
			}
			if err := h.Login(t.Context(), "api", follow); err != nil {
				t.Fatal(err)
			}
			if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
				t.Fatalf("after login: %q, %v", got, err)
			}
			if st := h.status("api"); st.State != upstream.StateConnected {
				t.Errorf("state %s, want connected", st.State)
			}
		})
	}
}

// TestOAuthRefreshThroughPool: a token the server stops accepting is
// refreshed and the call goes on, unseen; a refresh token the server
// revoked makes the server needs-auth, saying why.
func TestOAuthRefreshThroughPool(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: as.URL(), RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
	h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir())})
	if err := h.Login(t.Context(), "api", follow); err != nil {
		t.Fatal(err)
	}
	if _, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	as.ExpireAccessTokens()
	if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "b"}); err != nil || got != "b" {
		t.Fatalf("after the token expired: %q, %v", got, err)
	}
	if c := as.Counts(); c.Refreshes != 1 {
		t.Errorf("counts %+v, want one refresh", c)
	}
	as.ExpireAccessTokens()
	as.RevokeRefreshTokens()
	_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "c"})
	if !errors.Is(err, upstream.ErrNeedsAuth) || !strings.Contains(err.Error(), "needs-auth: the server refused the stored refresh token (invalid_grant); hint: switchboard auth login api") {
		t.Fatalf("after the refresh token was revoked: %v", err)
	}
	if st := h.status("api"); st.State != upstream.StateNeedsAuth || !strings.Contains(st.Error, "switchboard auth login api") {
		t.Errorf("status %+v, want needs-auth naming the command", st)
	}
}

// TestOAuthPrompt: with a Prompt, the first use of a server that needs a
// login logs in and goes on; the wait for the user does not count against
// the request timeout.
func TestOAuthPrompt(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	const timeout = 3 * time.Second
	s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: as.URL(), RequestTimeout: timeout, ProtocolVersion: "auto"}
	var prompted int
	slow := func(ctx context.Context, server, authURL string) (string, error) {
		prompted++
		// The user takes longer than the request timeout to log in: the
		// wait is the point here, so it is on the clock.
		select {
		case <-time.After(timeout + time.Second):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return follow(ctx, server, authURL)
	}
	h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir()), Prompt: slow})
	if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
		t.Fatalf("first use: %q, %v", got, err)
	}
	if prompted != 1 {
		t.Errorf("prompted %d times, want 1", prompted)
	}
}

// TestOAuthOff: "oauth": false, or an Authorization header of the
// server's own, keep OAuth out: a 401 is reported as before, and Login
// says why it cannot log in.
func TestOAuthOff(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	off := &config.Server{Name: "off", Type: config.TransportHTTP, URL: as.URL(), OAuth: &config.OAuth{Disabled: true}, ProtocolVersion: "auto"}
	header := &config.Server{Name: "header", Type: config.TransportHTTP, URL: as.URL(), Headers: map[string]string{"Authorization": "Bearer static"}, ProtocolVersion: "auto"}
	h := newPool(t, []*config.Server{off, header}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir())})
	for _, name := range []string{"off", "header"} {
		_, err := h.call(t.Context(), name, "echo", nil)
		if !errors.Is(err, upstream.ErrNeedsAuth) || !strings.Contains(err.Error(), "HTTP 401 Unauthorized; hint: give it credentials in the server's headers") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := h.Login(t.Context(), "off", follow); err == nil || !strings.Contains(err.Error(), `its definition says "oauth": false`) {
		t.Errorf("Login of off: %v", err)
	}
	if err := h.Login(t.Context(), "header", follow); err == nil || !strings.Contains(err.Error(), "it sends an Authorization header of its own") {
		t.Errorf("Login of header: %v", err)
	}
	if c := as.Counts(); c.Registrations != 0 {
		t.Errorf("counts %+v: nothing should have registered", c)
	}
}

package upstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestPerUserPool: a pool that serves users keeps, for a server whose
// credentials are per user, one login and one connection per user: a
// user's login is not another's, and a request of no user is refused,
// never sent with someone's token; a server with "perUser": false keeps
// one shared login that every user's calls use.
func TestPerUserPool(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	svcAS := oauthtest.New(t, oauthtest.Options{})
	shared := false
	api := &config.Server{Name: "api", Type: config.TransportHTTP, URL: as.URL(), RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
	svc := &config.Server{Name: "svc", Type: config.TransportHTTP, URL: svcAS.URL(), RequestTimeout: 20 * time.Second, ProtocolVersion: "auto", PerUser: &shared}
	store := credstore.NewFile(t.TempDir())
	h := newPool(t, []*config.Server{api, svc}, &upstream.Options{Credentials: store})
	h.SetUserCredentials(true)
	alice := identity.With(t.Context(), &identity.User{Subject: "alice"})
	bob := identity.With(t.Context(), &identity.User{Subject: "bob"})
	echo := func(ctx context.Context, server string) (string, error) {
		return h.call(ctx, server, "echo", map[string]any{"text": "hi"})
	}

	if err := h.Login(alice, "api", follow); err != nil {
		t.Fatal(err)
	}
	if got, err := echo(alice, "api"); err != nil || got != "hi" {
		t.Fatalf("alice after her login: %q, %v", got, err)
	}
	if _, err := echo(bob, "api"); !errors.Is(err, upstream.ErrNeedsAuth) {
		t.Fatalf("bob before his login: %v, want needs-auth", err)
	}
	if _, err := echo(t.Context(), "api"); !errors.Is(err, upstream.ErrNeedsAuth) || !strings.Contains(err.Error(), "no signed-in user") {
		t.Fatalf("no user: %v, want needs-auth naming no signed-in user", err)
	}
	if err := h.Login(bob, "api", follow); err != nil {
		t.Fatal(err)
	}
	if got, err := echo(bob, "api"); err != nil || got != "hi" {
		t.Fatalf("bob after his login: %q, %v", got, err)
	}
	if c := as.Counts(); c.CodeGrants != 2 {
		t.Errorf("%d logins at the authorization server, want one per user", c.CodeGrants)
	}

	// The shared service login: alice logs in, bob uses it.
	if err := h.Login(alice, "svc", follow); err != nil {
		t.Fatal(err)
	}
	if got, err := echo(bob, "svc"); err != nil || got != "hi" {
		t.Fatalf("bob on the shared server: %q, %v", got, err)
	}

	keys, err := store.Keys("oauth/")
	if err != nil {
		t.Fatal(err)
	}
	var apiUsers, svcShared int
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "oauth/api/") && strings.Contains(k, "/user/") && strings.HasSuffix(k, "/token"):
			apiUsers++
		case strings.HasPrefix(k, "oauth/svc/") && !strings.Contains(k, "/user/") && strings.HasSuffix(k, "/token"):
			svcShared++
		case strings.HasSuffix(k, "/token"):
			t.Errorf("unexpected token key %s", k)
		}
	}
	if apiUsers != 2 || svcShared != 1 {
		t.Errorf("api: %d users' tokens (want 2), svc: %d shared (want 1): %q", apiUsers, svcShared, keys)
	}
}

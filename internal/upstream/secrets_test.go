package upstream_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestStoredSecretReachesTheChild: a ${secret:NAME} in a stdio server's env
// is resolved from the credential store when the server connects, and the
// child gets the value; a secret that is not stored fails the connection
// with an error that names it and the command that stores it.
func TestStoredSecretReachesTheChild(t *testing.T) {
	const canary = "ghp_upstreamCanary0123456789"
	store := credstore.NewFile(t.TempDir())
	if err := store.Set(credstore.SecretKey("GH"), []byte(canary)); err != nil {
		t.Fatal(err)
	}
	good := fixture("good", testserver.EnvReport)
	good.Env["GITHUB_TOKEN"] = "${secret:GH}"
	missing := fixture("missing", testserver.EnvReport)
	missing.Env["GITHUB_TOKEN"] = "${secret:NOT_STORED}"
	h := newPool(t, []*config.Server{good, missing}, &upstream.Options{Credentials: store})

	got, err := h.call(t.Context(), "good", "env", map[string]any{"name": "GITHUB_TOKEN"})
	if want := testserver.EnvAnswer("GITHUB_TOKEN", canary); err != nil || got != want {
		t.Errorf("env = %q, %v; want %q", got, err, want)
	}
	_, err = h.Tools(t.Context(), "missing")
	if !errors.Is(err, config.ErrReference) || !strings.Contains(err.Error(), `server "missing"`) ||
		!strings.Contains(err.Error(), "secret NOT_STORED is not in the credential store (file)") || !strings.Contains(err.Error(), "hint: switchboard secret set NOT_STORED") {
		t.Errorf("missing secret: err = %v", err)
	}
	for _, st := range h.Snapshot() {
		if strings.Contains(st.Error, canary) {
			t.Errorf("status of %s holds the secret: %s", st.Name, st.Error)
		}
	}
}

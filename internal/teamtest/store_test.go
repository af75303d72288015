package teamtest

import (
	"crypto/rand"
	"encoding/base64"
	"runtime"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// sharedStore returns the settings.store of the replicas' configuration,
// as docs/team.md writes it (references, never literals), and the
// environment those references name: a fresh database on the test
// binary's private PostgreSQL (internal/testkit/pgtest) and a random key.
func sharedStore(t *testing.T) (settings map[string]any, env []string) {
	key := make([]byte, 32)
	rand.Read(key)
	return map[string]any{"store": map[string]any{"postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}"}},
		[]string{"DATABASE_URL=" + pgtest.DSN(t), "SWITCHBOARD_STORE_KEY=" + base64.StdEncoding.EncodeToString(key)}
}

func numCPU() int { return runtime.NumCPU() }

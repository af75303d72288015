package teamtest

import (
	"runtime"
	"testing"
)

// sharedStore returns the settings.store of the replicas' configuration
// and the environment its references name. Until PostgreSQL (internal/pgtest)
// is on main, there is none: each replica keeps its own SQLite catalog,
// credentials and audit trail, and the subtests that need the shared store
// (oauth, audit) fail saying what they did not find.
func sharedStore(t *testing.T) (settings map[string]any, env []string) {
	t.Log("no shared store yet: each replica keeps its own state")
	return nil, nil
}

func numCPU() int { return runtime.NumCPU() }

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as the switchboard command:
// the scripts exercise the real main, in a real process, with a fake HOME.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"switchboard": main})
}

// TestScripts runs testdata/script/*.txtar. Each script starts in $WORK/proj
// with HOME=$WORK/home and no XDG variables, so nothing of the real user's
// configuration is read or written.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			proj := filepath.Join(e.WorkDir, "proj")
			for _, d := range []string{home, proj} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			e.Setenv("HOME", home)
			for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "SWITCHBOARD_CONFIG", "CODEX_HOME"} {
				e.Setenv(v, "")
			}
			e.Cd = proj
			return nil
		},
		RequireExplicitExec: true,
	})
}

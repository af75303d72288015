package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestMain lets testscript run this test binary as the switchboard command:
// the scripts exercise the real main, in a real process, with a fake HOME.
func TestMain(m *testing.M) {
	upstream.SupervisorMain() // first: a supervisor's environment names the fixture server too
	testserver.Main()         // when started as the fixture server
	hostile.Main()            // when started as a hostile server
	testscript.Main(stopsPostgres{m}, map[string]func(){"switchboard": main, "follow": followMain})
}

// stopsPostgres runs the tests, then stops the private PostgreSQL server
// if a test started one (pgtest.Main cannot wrap testscript.Main).
type stopsPostgres struct{ m *testing.M }

func (s stopsPostgres) Run() int {
	code := s.m.Run()
	pgtest.Stop()
	return code
}

// TestScripts runs testdata/script/*.txtar. Each script starts in $WORK/proj
// with HOME=$WORK/home and no XDG variables, so nothing of the real user's
// configuration is read or written. $FIXTURE is the fixture server's
// executable: choose its mode with SWITCHBOARD_TESTSERVER in its env.
func TestScripts(t *testing.T) {
	fixture, _, _ := testserver.Command(testserver.Good)
	testscript.Run(t, scriptParams("testdata/script", map[string]string{"FIXTURE": fixture}))
}

// updateScripts makes a cmp in a script that fails rewrite the answer the
// script keeps (go test -run TestScripts/NAME -update): for the kept --json
// answers of testdata/script/json_answers.txtar, a change to what the CLI
// prints is then a reviewed diff.
var updateScripts = flag.Bool("update", false, "rewrite the answers scripts keep, where cmp finds them changed")

// TestPeerScripts runs testdata/peers/*.txtar, which use real MCP servers:
// $EVERYTHING, $FILESYSTEM and $MEMORY are the paths of server-everything's,
// server-filesystem's and server-memory's scripts and $NODE of node; $FIXTURE starts the
// fixture server (with SWITCHBOARD_TESTSERVER set).
func TestPeerScripts(t *testing.T) {
	p := mcptest.Peers(t)
	fixture, _, _ := testserver.Command(testserver.Good)
	testscript.Run(t, scriptParams("testdata/peers", map[string]string{
		"NODE":       p.Node,
		"EVERYTHING": filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		"FILESYSTEM": filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"),
		"MEMORY":     filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js"),
		"FIXTURE":    fixture,
	}))
}

func scriptParams(dir string, vars map[string]string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		Setup: func(e *testscript.Env) error {
			for k, v := range vars {
				e.Setenv(k, v)
			}
			home := filepath.Join(e.WorkDir, "home")
			proj := filepath.Join(e.WorkDir, "proj")
			for _, d := range []string{home, proj} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			e.Setenv("HOME", home)
			// $SBBIN holds the switchboard command, for scripts that set
			// PATH: testscript puts it first on PATH.
			e.Setenv("SBBIN", filepath.SplitList(e.Getenv("PATH"))[0])
			for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "SWITCHBOARD_CONFIG", "CODEX_HOME"} {
				e.Setenv(v, "")
			}
			e.Cd = proj
			return nil
		},
		Cmds:                scriptCmds,
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
	}
}

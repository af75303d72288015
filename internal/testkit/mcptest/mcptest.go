// Package mcptest starts real MCP peers for tests and checks that tests leave
// no processes behind.
//
// The peers are the npm packages pinned in testdata/mcp-peers (installed by
// scripts/test.sh through .ci/peers.sh) and go-sdk's conformance
// everything-server, built from the module cache. Every process the helpers
// start runs in its own process group, carries [OwnerEnv] in its environment,
// and is killed, with its group, when the test ends.
package mcptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// OwnerEnv names the environment variable that marks processes started for a
// test binary. Its value is the pid of the test process. Children inherit it,
// so it still identifies a grandchild that has been reparented away from the
// test process. See [CheckNoLeaks].
const OwnerEnv = "SWITCHBOARD_TEST_OWNER"

// ownerMark returns the OwnerEnv entry that marks this test process's children.
func ownerMark() string {
	return OwnerEnv + "=" + strconv.Itoa(os.Getpid())
}

// A Command is how to start a peer: an executable, its arguments and the
// environment entries it needs on top of the inherited environment. It is
// plain data, so tests can also put it into a gateway configuration.
type Command struct {
	Path string   // absolute path of the executable
	Args []string // arguments, not including Path
	Env  []string // KEY=VALUE entries added to the environment; includes OwnerEnv
}

// Cmd returns an unstarted exec.Cmd for c that runs in its own process group.
// When the test ends, the group is sent SIGKILL if the command was started.
// Cmd does not wait for the process: whoever starts it waits (for example
// mcp.CommandTransport does, in Close).
func (c Command) Cmd(t testing.TB) *exec.Cmd {
	t.Helper()
	cmd := c.command()
	t.Cleanup(func() { killGroup(cmd) })
	return cmd
}

// command returns an unstarted exec.Cmd for c in a new process group.
func (c Command) command() *exec.Cmd {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.SysProcAttr = groupAttr()
	return cmd
}

// moduleRoot returns the directory of the go.mod enclosing the working
// directory (a test runs in its package directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

//go:build unix

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

// A tree is what a stdio child and its descendants make up: on Unix, the
// process group the child leads (sysProcAttr), which closing the child
// signals whole.
type tree struct{ pgid int }

// prepare sets how cmd starts: as the leader of a new process group. env
// is the child's environment.
func prepare(cmd *exec.Cmd, env []string) error {
	cmd.SysProcAttr = sysProcAttr()
	return nil
}

// newTree returns the tree of a child started from a prepared command.
func newTree(p *os.Process) (tree, error) { return tree{pgid: p.Pid}, nil }

// stop asks the tree to end: SIGTERM to the group.
func (t tree) stop() { _ = syscall.Kill(-t.pgid, syscall.SIGTERM) }

// kill ends the tree at once: SIGKILL to the group.
func (t tree) kill() { _ = syscall.Kill(-t.pgid, syscall.SIGKILL) }

// alive reports whether any process of the group is left.
func (t tree) alive() bool { return syscall.Kill(-t.pgid, 0) == nil }

// release frees what the tree holds once it has ended: nothing here.
func (t tree) release() {}

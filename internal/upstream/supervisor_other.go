//go:build !linux

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

// SupervisorMain runs a stdio server's supervisor and exits, when this
// process was started as one by a Pool with Options.Supervise; otherwise it
// returns at once. Supervisors exist on Linux only: here it always returns.
func SupervisorMain() {}

// supervised returns cmd as it is: there is no supervisor on this system.
func supervised(cmd *exec.Cmd) (sup *exec.Cmd, report, reportW *os.File, err error) {
	return cmd, nil, nil, nil
}

func readReport(*os.File, func(int)) *syscall.WaitStatus { return nil }

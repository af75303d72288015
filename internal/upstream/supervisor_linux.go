package upstream

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchboard-mcp/switchboard/internal/upstream/internal/supervisor"
)

// A supervisor stands between switchboard and a stdio server so that the
// server's whole process group ends when switchboard does, however it ends
// (SIGKILL, the OOM killer, a crash), not only when it closes the server.
//
// The kernel kills a process whose parent dies only if it asked
// (PR_SET_PDEATHSIG), and only that process: the node that npx started, or
// the job of a "sh -c", would live on, reparented to init. So switchboard
// starts a copy of itself (/proc/self/exe) as the leader of a new process
// group, with SIGHUP as its parent-death signal; the copy runs the server in
// that group, on the same stdin, stdout and stderr (nothing is copied), and
// is a child subreaper, so that what the server's processes leave behind
// is reparented to it rather than to init. When the server exits, the
// supervisor reports how, and kills what is left; when switchboard dies, it
// gives the group SIGTERM, then SIGKILL after killGrace, as Close would have.
//
// It reports on file descriptor 3 (a pipe switchboard reads), one line each:
// "pid N" once the server runs, "exit W" (the raw wait status) once it has
// exited. The supervisor's side is package upstream/internal/supervisor.

// supervised returns a command that runs cmd under a supervisor, with
// both ends of the report pipe: the caller reads from the first and closes
// the second once the command has started (or failed to). Without /proc,
// where the supervisor could not be started, it returns cmd as it is.
func supervised(cmd *exec.Cmd) (sup *exec.Cmd, report, reportW *os.File, err error) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return cmd, nil, nil, nil
	}
	report, reportW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	sup = exec.Command("/proc/self/exe", append([]string{cmd.Path}, cmd.Args...)...)
	sup.Args[0] = supervisor.Name
	sup.Dir = cmd.Dir
	sup.Env = append(slices.Clip(cmd.Env), supervisor.Env+"="+strconv.Itoa(os.Getpid()))
	sup.ExtraFiles = []*os.File{reportW}
	sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
	return sup, report, reportW, nil
}

// SupervisorMain runs a stdio server's supervisor and exits, when this
// process was started as one by a Pool with Options.Supervise; otherwise it
// returns at once. The supervisor now runs from the initialisation of
// package upstream/internal/supervisor, before the program's other
// packages are initialised (see there), so by the time main can call this
// it has nothing left to do; it stays for programs that call it.
func SupervisorMain() { supervisor.Main() }

// readReport reads a supervisor's report until the supervisor is gone. It
// calls onPID with the server's pid, and returns the server's wait status,
// or nil if the supervisor did not say.
func readReport(r *os.File, onPID func(int)) *syscall.WaitStatus {
	var status *syscall.WaitStatus
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseUint(val, 10, 32)
		if err != nil {
			continue
		}
		switch key {
		case "pid":
			onPID(int(n))
		case "exit":
			ws := syscall.WaitStatus(n)
			status = &ws
		}
	}
	return status
}

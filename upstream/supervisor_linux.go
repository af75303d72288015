package upstream

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/switchboard-mcp/switchboard/internal/exepages"
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
// exited.

// supervisorEnv marks a process started as a supervisor; its value is the
// pid of the switchboard that started it.
const supervisorEnv = "SWITCHBOARD_SUPERVISOR_OF"

// supervisorName is the supervisor's argv[0], as ps shows it.
const supervisorName = "switchboard-supervisor"

// reportFD is the supervisor's end of the report pipe.
const reportFD = 3

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (prctl(2)), missing from
// package syscall on some architectures.
const prSetChildSubreaper = 36

// exitOrphaned is the supervisor's exit status when its parent died before
// it could start the server.
const exitOrphaned = 125

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
	sup.Args[0] = supervisorName
	sup.Dir = cmd.Dir
	sup.Env = append(slices.Clip(cmd.Env), supervisorEnv+"="+strconv.Itoa(os.Getpid()))
	sup.ExtraFiles = []*os.File{reportW}
	sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
	return sup, report, reportW, nil
}

// SupervisorMain runs a stdio server's supervisor and exits, when this
// process was started as one by a Pool with Options.Supervise; otherwise it
// returns at once. A program that sets Supervise calls it first thing in
// main (and a test binary that does, first thing in TestMain), before
// anything else reads the environment or the command line: the supervisor
// is a copy of that program.
func SupervisorMain() {
	v, ok := os.LookupEnv(supervisorEnv)
	if !ok {
		return
	}
	parent, err := strconv.Atoi(v)
	if err != nil || len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "switchboard: %s is set but this process was not started as a supervisor (args %q)\n", supervisorEnv, os.Args)
		os.Exit(2)
	}
	os.Exit(supervise(parent, os.Args[1], os.Args[2:]))
}

// supervise starts the server at path with argv and waits for it or for
// the parent to die. It returns only when it could not start the server.
func supervise(parent int, path string, argv []string) int {
	syscall.CloseOnExec(reportFD)
	report := os.NewFile(reportFD, "report")
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		fmt.Fprintf(os.Stderr, "switchboard: supervisor: becoming a subreaper: %v\n", err)
	}
	if !parentAlive(parent) {
		return exitOrphaned
	}
	child, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, supervisorEnv+"=") }),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Should the supervisor itself be killed, so is the server.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "switchboard: starting %q: %v\n", argv[0], unwrapExec(err))
		return 127
	}
	// From here on the supervisor only waits: it gives back the pages of
	// the binary its start-up mapped (nearly 20 MB of a switchboard
	// binary's, per stdio server), before it reports, so that once the
	// server runs they are gone. It is worth no error: it only saves memory.
	_, _ = exepages.Release()
	fmt.Fprintf(report, "pid %d\n", child.Pid)
	exits := make(chan syscall.WaitStatus, 1)
	go reap(child.Pid, exits)
	for {
		select {
		case ws := <-exits:
			fmt.Fprintf(report, "exit %d\n", uint32(ws))
			endGroup()
		case <-sigs:
			// SIGTERM and SIGINT sent to the group are the server's to
			// handle; only the parent's death is the supervisor's.
			if parentAlive(parent) {
				continue
			}
			_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGTERM)
			t := time.NewTimer(killGrace)
			select {
			case <-exits:
			case <-t.C:
			}
			endGroup()
		}
	}
}

// parentAlive reports whether the process that started the supervisor is
// still its parent. The kernel sends the parent-death signal when the
// parent's thread that started it exits, which need not be the whole
// process: if the parent lives, the signal is armed again.
func parentAlive(parent int) bool {
	if os.Getppid() != parent {
		return false
	}
	_ = prctl(syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGHUP))
	return os.Getppid() == parent // it may have died before the signal was armed
}

func prctl(option int, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, uintptr(option), arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// reap waits for every child, the server and the orphans the supervisor
// adopts as a subreaper, and sends the server's wait status on exits. It
// returns once no child is left.
func reap(server int, exits chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if pid == server {
			exits <- ws
		}
	}
}

// endGroup kills the supervisor's descendants that left its process group,
// then the group, the supervisor with it. It does not return when the
// supervisor leads its group, as it was started to.
//
// Finding descendants reads every process's /proc entry; it is skipped when
// the supervisor has no child left: a subreaper adopts what its children
// leave, so every living descendant has an ancestor that is its child.
func endGroup() {
	pgrp := syscall.Getpgrp()
	if hasChildren() {
		for _, p := range descendants(os.Getpid()) {
			if p.pgrp != pgrp {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	}
	if pgrp == os.Getpid() {
		_ = syscall.Kill(-pgrp, syscall.SIGKILL)
		time.Sleep(time.Minute) // the signal is on its way
	}
	os.Exit(1)
}

// hasChildren reports whether the calling process has a child, living or
// not yet reaped, without reaping it (waitid with WNOWAIT).
func hasChildren() bool {
	var info [128]byte // siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, _P_ALL, 0, uintptr(unsafe.Pointer(&info[0])),
		syscall.WEXITED|syscall.WNOHANG|_WNOWAIT, 0, 0)
	return errno != syscall.ECHILD
}

// waitid(2) constants missing from package syscall.
const (
	_P_ALL   = 0
	_WNOWAIT = 0x01000000
)

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

// Package supervisor is the supervisor of a stdio server (see
// upstream/supervisor_linux.go for what it is for and how switchboard
// starts it), and what it and package upstream read from /proc.
//
// A supervisor is a copy of the program that started it: it runs from this
// package's initialisation, not from main, so that it starts the server
// before most of the program's other packages are initialised (in
// switchboard, SQLite's runtime, the TUI's tables, JSON Schema, go-sdk: two
// thirds of the CPU of its initialisation), and a supervisor sits on the
// critical path of every stdio server's start.
//
// The linker orders initialisation by dependencies, then by import path:
// each step runs the first package, by path, whose imports have run. So
// this package runs once its imports have, after only the packages whose
// imports were ready as soon and whose paths sort before it (26th of 174
// in switchboard). It imports what package os does, plus os/signal: not
// strings, bytes or strconv (see num.go): ready early, but sorting late by
// path, they come after dozens of other packages, and it would with them.
package supervisor

import (
	"errors"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"
	"unsafe"
)

// Env marks a process started as a supervisor; its value is the pid of the
// switchboard that started it.
const Env = "SWITCHBOARD_SUPERVISOR_OF"

// Name is the supervisor's argv[0], as ps shows it.
const Name = "switchboard-supervisor"

// ReportFD is the supervisor's end of the report pipe.
const ReportFD = 3

// KillGrace is how long the group has between SIGTERM and SIGKILL when the
// supervisor's parent has died: upstream's killGrace, as Close would give.
const KillGrace = time.Second

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (prctl(2)), missing from
// package syscall on some architectures.
const prSetChildSubreaper = 36

// exitOrphaned is the supervisor's exit status when its parent died before
// it could start the server.
const exitOrphaned = 125

// The supervisor runs here, before the packages that import this one are
// initialised: see the package comment.
func init() { Main() }

// Main runs a stdio server's supervisor and exits, when this process was
// started as one; otherwise it returns at once. It has already run, from
// this package's initialisation, by the time anything else can call it.
func Main() {
	v, ok := syscall.Getenv(Env)
	if !ok {
		return
	}
	parent, ok := atoi(v)
	if !ok || len(os.Args) < 3 {
		os.Stderr.WriteString("switchboard: " + Env + " is set but this process was not started as a supervisor (args " + quote(os.Args) + ")\n")
		os.Exit(2)
	}
	os.Exit(supervise(parent, os.Args[1], os.Args[2:]))
}

// supervise starts the server at path with argv and waits for it or for
// the parent to die. It returns only when it could not start the server.
func supervise(parent int, path string, argv []string) int {
	syscall.CloseOnExec(ReportFD)
	report := os.NewFile(ReportFD, "report")
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		os.Stderr.WriteString("switchboard: supervisor: becoming a subreaper: " + err.Error() + "\n")
	}
	if !parentAlive(parent) {
		return exitOrphaned
	}
	child, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   slices.DeleteFunc(os.Environ(), func(kv string) bool { return len(kv) > len(Env) && kv[:len(Env)+1] == Env+"=" }),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Should the supervisor itself be killed, so is the server.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path repeats the command
		}
		os.Stderr.WriteString("switchboard: starting " + quote(argv[:1]) + ": " + err.Error() + "\n")
		return 127
	}
	// From here on the supervisor only waits: the pages its start-up
	// mapped go back before it reports, so that once the server runs they
	// are gone.
	releasePages()
	report.WriteString("pid " + itoa(uint64(child.Pid)) + "\n")
	exits := make(chan syscall.WaitStatus, 1)
	go reap(child.Pid, exits)
	for {
		select {
		case ws := <-exits:
			report.WriteString("exit " + itoa(uint64(uint32(ws))) + "\n")
			endGroup()
		case <-sigs:
			// SIGTERM and SIGINT sent to the group are the server's to
			// handle; only the parent's death is the supervisor's.
			if parentAlive(parent) {
				continue
			}
			_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGTERM)
			t := time.NewTimer(KillGrace)
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
		for _, p := range Descendants(os.Getpid()) {
			if p.Pgrp != pgrp {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
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

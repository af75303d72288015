package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// A tree is what a stdio child and its descendants make up: on Windows, a
// Job Object that the child is put in before it runs, and that every
// process it starts joins (the node that npx.cmd's cmd.exe starts, and
// what node starts). The job is made to kill them all when its last handle
// closes, which is when close releases it or when switchboard exits,
// however it exits: Windows closes the handles of a process that ends.
//
// Its methods are safe for concurrent use, and do nothing once release has
// closed the job: its handle's value may by then name another object.
type tree struct{ *job }

type job struct {
	pid int
	mu  sync.Mutex
	h   windows.Handle // 0 once released
}

// with calls f with the job's handle, unless it has been released.
func (j *job) with(f func(windows.Handle)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		f(j.h)
	}
}

// The creation flags of creationFlags, checked against the system's: the
// array types match only when the values are equal.
var (
	_ [0]struct{} = [createSuspended - windows.CREATE_SUSPENDED]struct{}{}
	_ [0]struct{} = [createNewProcessGroup - windows.CREATE_NEW_PROCESS_GROUP]struct{}{}
	_ [0]struct{} = [createNoWindow - windows.CREATE_NO_WINDOW]struct{}{}
)

// prepare sets how cmd starts: suspended, so that it joins its job before
// it can start anything; in a process group of its own, so that stop can
// send it CTRL_BREAK and the user's Ctrl-C reaches switchboard alone; and a
// batch file (npx.cmd) through cmd.exe with its arguments quoted for it.
// env is the child's environment.
func prepare(cmd *exec.Cmd, env []string) error {
	attr := &syscall.SysProcAttr{CreationFlags: creationFlags(hasConsole())}
	if isBatch(cmd.Path) {
		shell := comspec(env)
		line, err := batchCommandLine(shell, cmd.Path, cmd.Args[1:])
		if err != nil {
			return err
		}
		cmd.Path, attr.CmdLine = shell, line
	}
	cmd.SysProcAttr = attr
	return nil
}

// hasConsole reports whether switchboard has a console, which its children
// then share. Without one (started by a desktop program), each console
// child would open a window of its own.
func hasConsole() bool {
	_, err := windows.GetConsoleCP()
	return err == nil
}

// newTree puts the child, started suspended by prepare, in a new job that
// kills its processes when closed, then lets it run. On failure the child
// is killed: it would otherwise stay suspended.
func newTree(p *os.Process) (t tree, err error) {
	j := &job{pid: p.Pid}
	defer func() {
		if err != nil {
			_ = p.Kill()
			if j.h != 0 {
				windows.CloseHandle(j.h)
			}
			err = fmt.Errorf("putting the process in a job object: %w", err)
		}
	}()
	if j.h, err = windows.CreateJobObject(nil, nil); err != nil {
		return t, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err = windows.SetInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return t, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return t, err
	}
	defer windows.CloseHandle(h)
	if err = windows.AssignProcessToJobObject(j.h, h); err != nil {
		return t, err
	}
	return tree{j}, resume(uint32(p.Pid))
}

// resume lets a process started suspended run: it resumes its threads (one,
// its first), which Go's os.StartProcess does not hand back.
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing its threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	resumed := 0
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("resuming its thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resuming its thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing its threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("resuming it: it has no thread")
	}
	return nil
}

// stop asks the tree to end, as SIGTERM does on Unix: CTRL_BREAK to the
// child's process group, which node and cmd.exe end on. It reaches them
// only when they share switchboard's console; kill follows in any case.
func (t tree) stop() {
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.pid))
}

// kill ends every process of the job at once.
func (t tree) kill() {
	t.with(func(h windows.Handle) { _ = windows.TerminateJobObject(h, 1) })
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// golang.org/x/sys/windows does not define.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// alive reports whether any process of the job is left.
func (t tree) alive() (alive bool) {
	t.with(func(h windows.Handle) {
		var info jobAccounting
		err := windows.QueryInformationJobObject(h, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
		alive = err == nil && info.ActiveProcesses > 0
	})
	return alive
}

// release closes the job, which kills whatever is still in it. It is
// idempotent.
func (t tree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h != 0 {
		windows.CloseHandle(t.h)
		t.h = 0
	}
}

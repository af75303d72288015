package upstream

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// killGrace is how long a process tree has between stop (SIGTERM) and kill
// (SIGKILL).
const killGrace = time.Second

// A process is a stdio server's child, started in a tree of its own (a
// process group on Unix, a Job Object on Windows: see tree_*.go) so that
// closing it also ends what it started (npx starts node, for one). On
// Linux with Options.Supervise, the child is a supervisor that runs the
// server in its group (see supervisor_linux.go).
//
// Its goroutines (the waiter, the stderr copier and, under a supervisor,
// the report reader) are owned by the process: close waits for them.
type process struct {
	cmd       *exec.Cmd
	pid       int      // the child's pid, which is its process group's id on Unix
	tree      tree     // the child and its descendants
	stdin     *os.File // our end of the child's stdin
	stdout    *os.File // our end of the child's stdout
	stderr    *os.File // our end of the child's stderr
	report    *os.File // our end of the supervisor's report; nil without one
	errRing   *ring
	errDone   chan struct{} // closed when stderr has been read to its end
	errLines  io.Writer     // besides errRing; nil for none
	redact    *redact.Set   // replaced in stderr before errRing and errLines see it
	terminate time.Duration // how long close waits after closing stdin
	writeMax  time.Duration // bound on one write to stdin

	serverPID atomic.Int64 // the server's pid, as its supervisor reported it

	exited     chan struct{}       // closed once the child has been waited for and its tree killed
	closed     chan struct{}       // closed when close has finished
	reported   chan struct{}       // closed once the supervisor's report has been read
	waitErr    error               // set before exited is closed
	exitStatus *syscall.WaitStatus // the server's, from its supervisor; set before exited is closed

	wg        sync.WaitGroup
	closeOnce sync.Once
}

// procOptions are how a pool starts and stops its stdio children.
type procOptions struct {
	terminate time.Duration // how long close waits after closing stdin
	writeMax  time.Duration // bound on one write to stdin
	supervise bool          // start the server under a supervisor (Linux)
	stderr    func(string)  // receives each stderr line; nil for none
	redact    *redact.Set   // replaced in stderr before anything keeps it
	log       *slog.Logger  // says when an npx command runs the installed bin; never nil
}

// startProcess starts the server's command with env in the server's working
// directory. The child's stdin, stdout and stderr are pipes; stderr is kept
// in a ring buffer. An npx command whose package is installed runs the
// package's bin instead (see npx.go); should that not start, npx runs as
// written.
func startProcess(s *config.Server, env []string, o procOptions) (*process, error) {
	if s.DataDir != "" {
		// An Agent Plugin's PLUGIN_DATA exists before its server starts.
		if err := privfile.MkdirAll(s.DataDir); err != nil {
			return nil, withClass(ClassStart, fmt.Errorf("starting %q: creating its data directory: %w", s.Command, err))
		}
	}
	if t, ok := resolveNpx(s.Command, s.Args, s.Cwd, env); ok {
		p, err := startCommand(s, t.path, t.path, t.args, env, o)
		if err == nil {
			o.log.Info("running the installed package's bin in place of npx", "bin", t.bin)
			return p, nil
		}
		o.log.Info("running npx as written: the installed package's bin did not start", "bin", t.bin, "error", err)
	}
	path, err := lookPath(s.Command, s.Cwd, env)
	if err != nil {
		return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, errors.Unwrap(err)))
	}
	return startCommand(s, path, s.Command, s.Args, env, o)
}

// startCommand starts the program at path, named argv0, with args, for
// the server s.
func startCommand(s *config.Server, path, argv0 string, args, env []string, o procOptions) (*process, error) {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = argv0
	cmd.Dir = s.Cwd
	cmd.Env = env
	if err := prepare(cmd, env); err != nil {
		return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, err))
	}
	var report, reportW *os.File
	var err error
	if o.supervise {
		if cmd, report, reportW, err = supervised(cmd); err != nil {
			return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, err))
		}
	}
	files, err := pipes(cmd)
	if err != nil {
		closeFiles(report, reportW)
		return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, err))
	}
	err = cmd.Start()
	closeFiles(files[0], files[3], files[5], reportW) // the child's ends
	if err != nil {
		closeFiles(files[1], files[2], files[4], report)
		return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, unwrapExec(err)))
	}
	t, err := newTree(cmd.Process)
	if err != nil {
		closeFiles(files[1], files[2], files[4], report)
		_ = cmd.Wait()
		return nil, withClass(ClassStart, fmt.Errorf("starting %q: %w", s.Command, err))
	}
	p := &process{
		cmd: cmd, pid: cmd.Process.Pid, tree: t,
		stdin: files[1], stdout: files[2], stderr: files[4], report: report,
		errRing: newRing(stderrRingSize), errDone: make(chan struct{}), errLines: newLineWriter(o.stderr), redact: o.redact, terminate: o.terminate, writeMax: o.writeMax,
		exited: make(chan struct{}), closed: make(chan struct{}), reported: make(chan struct{}),
	}
	p.wg.Add(3)
	go p.copyStderr()
	go p.readReport()
	go p.wait()
	return p, nil
}

// pipes makes the child's stdin, stdout and stderr pipes and returns
// [stdin read, stdin write, stdout read, stdout write, stderr read, stderr write].
func pipes(cmd *exec.Cmd) ([]*os.File, error) {
	var files []*os.File
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(files...)
			return nil, err
		}
		files = append(files, r, w)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[3], files[5]
	return files, nil
}

// closeFiles closes files, skipping nil ones.
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// unwrapExec drops the "fork/exec /abs/path:" prefix of a start error, which
// repeats the command.
func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// copyStderr keeps the child's stderr, its secret values replaced line by
// line: in the ring, whose tail errors quote, and for the line callback.
func (p *process) copyStderr() {
	defer p.wg.Done()
	defer close(p.errDone)
	var w io.Writer = p.errRing
	if p.errLines != nil {
		w = io.MultiWriter(p.errRing, p.errLines)
	}
	lw := redact.NewLineWriter(p.redact, w)
	_, _ = io.Copy(lw, p.stderr)
	lw.Flush()
}

// readReport reads the supervisor's report, if there is a supervisor,
// until the supervisor is gone.
func (p *process) readReport() {
	defer p.wg.Done()
	defer close(p.reported)
	if p.report == nil {
		return
	}
	defer p.report.Close()
	p.exitStatus = readReport(p.report, func(pid int) { p.serverPID.Store(int64(pid)) })
}

// wait reaps the child, then kills its tree: once the child is gone, what
// it started has no one to stop it.
func (p *process) wait() {
	defer p.wg.Done()
	p.waitErr = p.cmd.Wait()
	p.tree.kill()
	<-p.reported // only the supervisor held the other end: it is at its end
	close(p.exited)
}

// serverPid returns the pid of the server: its supervisor's report, or the
// child's own pid.
func (p *process) serverPid() int {
	if pid := p.serverPID.Load(); pid != 0 {
		return int(pid)
	}
	return p.pid
}

// close ends the child the way the MCP stdio transport asks: close its stdin,
// wait p.terminate for it to exit, stop its tree (SIGTERM to its group;
// CTRL_BREAK on Windows), wait killGrace, kill the tree. It then waits for
// the process's goroutines. It is idempotent.
func (p *process) close() {
	p.closeOnce.Do(func() {
		_ = p.stdin.Close()
		if !p.waitExit(p.terminate) {
			p.tree.stop()
			if !p.waitExit(killGrace) {
				p.tree.kill()
				<-p.exited
			}
		}
		p.waitGroupGone()
		p.tree.release()
		// A grandchild that left the group may still hold the pipes: closing
		// our ends unblocks the readers. What the child wrote last to
		// stderr is read first (its end comes with the child's exit
		// unless such a grandchild holds it): errors quote it.
		p.drainStderr()
		_ = p.stdout.Close()
		_ = p.stderr.Close()
		p.wg.Wait()
		close(p.closed)
	})
}

// groupGoneWait bounds how long close waits for the killed group to vanish.
const groupGoneWait = 500 * time.Millisecond

// waitGroupGone waits, briefly, until no process of the child's tree is
// left, so that when close returns its descendants are gone too. Signals are
// asynchronous and the kernel offers no event for a group that is not ours to
// wait for, so this polls.
func (p *process) waitGroupGone() {
	deadline := time.Now().Add(groupGoneWait)
	for p.tree.alive() && time.Now().Before(deadline) {
		p.tree.kill()
		time.Sleep(5 * time.Millisecond)
	}
}

// kill ends the child and its tree at once; close still has to be called.
func (p *process) kill() { p.tree.kill() }

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stderrDrain bounds how long drainStderr waits.
const stderrDrain = 250 * time.Millisecond

// drainStderr waits until the child's stderr has been read to its end, or
// stderrDrain, whichever comes first.
func (p *process) drainStderr() {
	t := time.NewTimer(stderrDrain)
	defer t.Stop()
	select {
	case <-p.errDone:
	case <-t.C:
	}
}

// exitError describes how the child ended ("exited with status 1"), followed
// by the line of its stderr that best says why. Call it after exited is
// closed.
func (p *process) exitError() error {
	var msg string
	var ee *exec.ExitError
	switch {
	case p.exitStatus != nil:
		msg = describeStatus(*p.exitStatus)
	case p.waitErr == nil:
		msg = "exited with status 0"
	case errors.As(p.waitErr, &ee) && ee.Exited():
		msg = fmt.Sprintf("exited with status %d", ee.ExitCode())
	case errors.As(p.waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg = "killed by signal " + ws.Signal().String()
		} else {
			msg = ee.Error()
		}
	default:
		msg = p.waitErr.Error()
	}
	p.drainStderr()
	if why := explain(p.errRing.tail(2048)); why != "" {
		msg += ": " + why
	}
	return errors.New(msg)
}

// describeStatus says how a process ended, as exitError does.
func describeStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exited with status %d", ws.ExitStatus())
}

// explain picks from the tail of stderr the line that best says why a process
// failed: the first that looks like an error, else the last.
func explain(tail string) string {
	var lines []string
	for l := range strings.SplitSeq(tail, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	pick := lines[len(lines)-1]
	for _, l := range lines {
		lower := strings.ToLower(l)
		if strings.Contains(lower, "error") || strings.Contains(lower, "panic") ||
			strings.Contains(lower, "fatal") || strings.Contains(lower, "exception") {
			pick = l
			break
		}
	}
	if len(pick) > 300 {
		pick = strings.ToValidUTF8(pick[:300], "") + "…"
	}
	return pick
}

// stdinWriter writes to the child's stdin, each write bounded in time: a
// child that stops reading cannot block a request forever. Closing it closes
// the process.
type stdinWriter struct{ p *process }

func (w stdinWriter) Write(b []byte) (int, error) {
	if w.p.writeMax > 0 {
		if err := w.p.stdin.SetWriteDeadline(time.Now().Add(w.p.writeMax)); err != nil {
			return w.p.writeBounded(b) // a pipe without deadlines (Windows)
		}
	}
	n, err := w.p.stdin.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = w.p.errStoppedReading()
	}
	return n, err
}

func (p *process) errStoppedReading() error {
	return withClass(ClassProtocol, fmt.Errorf("server stopped reading its input (write blocked for %s)", fmtDuration(p.writeMax)))
}

// writeBounded bounds a write to stdin from outside, for pipes that take no
// deadline (Go's pipes on Windows): it writes from a goroutine and, should
// the write block for writeMax, closes stdin, which cancels it (Windows
// cancels a pipe's pending I/O on close), then kills the tree should that
// not be enough within killGrace, which breaks the pipe. It returns once
// the goroutine has.
func (p *process) writeBounded(b []byte) (int, error) {
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := p.stdin.Write(b)
		done <- result{n, err}
	}()
	t := time.NewTimer(p.writeMax)
	defer t.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-t.C:
	}
	_ = p.stdin.Close()
	t.Reset(killGrace)
	select {
	case r := <-done:
		return r.n, p.errStoppedReading()
	case <-t.C:
	}
	p.tree.kill()
	r := <-done
	return r.n, p.errStoppedReading()
}

func (w stdinWriter) Close() error {
	w.p.close()
	return nil
}

//go:build unix

package upstream_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/exepages"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// ownerEnv makes the test binary a pool owner (see ownerMain): a process
// that holds a pool with a stdio server that started a grandchild, to be
// killed with SIGKILL. Its value is "supervised" or "unsupervised";
// ownerDirEnv names the pool's GroupDir.
const (
	ownerEnv    = "SWITCHBOARD_TEST_POOL_OWNER"
	ownerDirEnv = "SWITCHBOARD_TEST_POOL_OWNER_DIR"
)

// ownerMain runs the pool owner when the environment asks for it: it makes
// a pool over the fixture server, has the server start a grandchild,
// prints "PIDS server grandchild" and waits to be killed.
func ownerMain() {
	mode := os.Getenv(ownerEnv)
	if mode == "" {
		return
	}
	pool := upstream.New([]*config.Server{fixture("f", testserver.Good)}, &upstream.Options{
		BaseEnv:   append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv)),
		Supervise: mode == "supervised",
		GroupDir:  os.Getenv(ownerDirEnv),
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	var pids []string
	for _, tool := range []string{"pid", "spawn"} {
		res, err := pool.CallTool(context.Background(), "f", tool, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "owner:", err)
			os.Exit(1)
		}
		pids = append(pids, firstText(res.Content))
	}
	fmt.Println("PIDS", strings.Join(pids, " "))
	select {}
}

// startOwner starts a pool owner and returns it with the pids of its
// server and of the server's grandchild.
func startOwner(t *testing.T, mode, dir string) (owner *exec.Cmd, server, grandchild int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("supervisors and sweeps need Linux")
	}
	owner = exec.Command(os.Args[0], "-test.run=^$")
	owner.Env = append(os.Environ(), ownerEnv+"="+mode, ownerDirEnv+"="+dir, "GORACE=atexit_sleep_ms=0")
	owner.Stderr = testWriter{t}
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Process.Kill(); owner.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "PIDS %d %d", &server, &grandchild); err != nil || serr != nil {
		t.Fatalf("the pool owner said %q (%v)", line, err)
	}
	if !mcptest.Alive(server) || !mcptest.Alive(grandchild) {
		t.Fatalf("server %d or grandchild %d not running", server, grandchild)
	}
	return owner, server, grandchild
}

// killOwner kills the owner with SIGKILL, as the OOM killer would, and
// reaps it.
func killOwner(t *testing.T, owner *exec.Cmd) {
	t.Helper()
	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
}

// TestSupervisorEndsGroupOnSIGKILL kills the owner of a supervised pool
// with SIGKILL and checks that the kernel's parent-death signal reaches
// the supervisor, which ends the server and the grandchild it started.
func TestSupervisorEndsGroupOnSIGKILL(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	owner, server, grandchild := startOwner(t, "supervised", t.TempDir())
	if got := parentName(t, server); got != "switchboard-supervisor" {
		t.Fatalf("the server's parent is %q, want the supervisor", got)
	}
	killOwner(t, owner)
	mcptest.WaitGone(t, "after the pool's owner was killed", server, grandchild)
}

// TestSweepEndsGroupsOfDeadPool kills the owner of an unsupervised pool
// with SIGKILL, sees the grandchild outlive it (only the server had a
// parent-death signal), and checks that the next pool over the same
// GroupDir ends it.
func TestSweepEndsGroupsOfDeadPool(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	dir := t.TempDir()
	owner, server, grandchild := startOwner(t, "unsupervised", dir)
	killOwner(t, owner)
	mcptest.WaitGone(t, "the server, after its parent was killed", server)
	if !mcptest.Alive(grandchild) {
		t.Fatalf("grandchild %d ended with its parent: nothing left for the sweep to do", grandchild)
	}
	newPool(t, nil, &upstream.Options{GroupDir: dir})
	mcptest.WaitGone(t, "after a new pool swept", grandchild)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left in the group directory: %v", ents)
	}
}

// parentName returns the argv[0] of pid's parent.
func parentName(t *testing.T, pid int) string {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(stat)
	var ppid int
	fmt.Sscan(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[1], &ppid)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid))
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(string(cmdline), "\x00")
	return name
}

// TestSupervisedServerKilled kills a supervised server from outside and
// checks that the status names the server's own pid and the error says
// how the server, not its supervisor, ended.
func TestSupervisedServerKilled(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	out, err := h.call(t.Context(), "f", "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := h.status("f")
	if got := strconv.Itoa(st.PID); got != out {
		t.Fatalf("status PID %s, want the server's own %s", got, out)
	}
	if runtime.GOOS == "linux" && parentName(t, st.PID) != "switchboard-supervisor" {
		t.Fatalf("the server does not run under a supervisor")
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st = h.waitFor("f", "the server's end", inState(upstream.StateFailed))
	if !strings.Contains(st.Error, "killed by signal killed") {
		t.Errorf("error %q, want it to say the server was killed by SIGKILL", st.Error)
	}
}

// TestSupervisorReleasesStartupPages checks that a supervisor, which only
// waits once its server runs, keeps few of the binary's pages mapped
// (internal/exepages): start-up maps most of them.
func TestSupervisorReleasesStartupPages(t *testing.T) {
	_, server, _ := startOwner(t, "supervised", t.TempDir())
	sup := parentPID(t, server)
	resident, size, err := exepages.Resident(sup)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("supervisor %d: %d kB of its binary's %d kB of read-only mappings resident", sup, resident>>10, size>>10)
	if resident > size/4 {
		t.Errorf("the supervisor has %d kB of its binary's %d kB of read-only mappings resident, want at most a quarter", resident>>10, size>>10)
	}
}

// parentPID is the pid of pid's parent.
func parentPID(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	return ppid
}

package credstore_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// The test binary doubles as a process that holds a lock: with
// $CREDSTORE_HOLD=DIR it locks key "oauth/x" in DIR, says "held", and waits
// for its standard input to close.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CREDSTORE_HOLD"); dir != "" {
		unlock, err := credstore.NewFile(dir).Lock(context.Background(), "oauth/x")
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		unlock()
		os.Exit(0)
	}
	pgtest.Main(m)
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := credstore.NewFile(dir)
	if err := s.Set("secret/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, %v; want 0700 (tightened)", info.Mode().Perm(), err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
		info, _ := e.Info()
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
	}
}

// TestLockAcrossProcesses: while another process holds a key's lock, Lock
// waits, and gives up when its context ends; once the holder lets go, Lock
// succeeds.
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "CREDSTORE_HOLD="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}

	s := credstore.NewFile(dir)
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the lock is held: Lock must give up on the ended context, not wait
	if _, err := s.Lock(ctx, "oauth/x"); err == nil || !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("Lock while held = %v, want it to give up", err)
	}
	other, err := s.Lock(t.Context(), "oauth/y") // another key is free
	if err != nil {
		t.Fatal(err)
	}
	other()

	stdin.Close() // the holder unlocks and exits
	unlock, err := s.Lock(t.Context(), "oauth/x")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

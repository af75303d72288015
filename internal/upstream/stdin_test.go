package upstream

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestWriteBounded: where a pipe takes no write deadline (Windows), a write
// to a server that stopped reading still ends, with the error that says so,
// once writeMax has passed. Here the server is sleep, which never reads.
func TestWriteBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command("sleep", "60")
	cmd.Stdin = r
	if err := prepare(cmd, os.Environ()); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("starting sleep: %v", err)
	}
	r.Close()
	tr, err := newTree(cmd.Process)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { tr.kill(); cmd.Wait(); tr.release() }()

	// writeMax is the knob under test, kept short; the write would
	// otherwise block for good.
	p := &process{stdin: w, tree: tr, writeMax: 50 * time.Millisecond}
	n, err := p.writeBounded(make([]byte, 4<<20)) // far more than a pipe buffers
	if classOf(err, "") != ClassProtocol || n >= 4<<20 {
		t.Fatalf("writeBounded = %d, %v; want a protocol error that the server stopped reading", n, err)
	}
	if got := err.Error(); got != "server stopped reading its input (write blocked for 50ms)" {
		t.Errorf("error = %q", got)
	}
	if n, err := p.writeBounded([]byte("x")); err == nil {
		t.Errorf("a write after the bound = %d, nil; want an error (stdin is closed)", n)
	}
}

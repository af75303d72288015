package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// gate is a writer that holds each Write until the test lets it through,
// and keeps what it let through.
type gate struct {
	entered chan []byte // each Write's bytes, as it starts
	release chan error  // what that Write returns
	lockedBuffer
}

func newGate() *gate { return &gate{entered: make(chan []byte), release: make(chan error)} }

func (g *gate) Write(p []byte) (int, error) {
	g.entered <- bytes.Clone(p)
	if err := <-g.release; err != nil {
		return 0, err
	}
	return g.lockedBuffer.Write(p)
}

// lockedBuffer is a bytes.Buffer safe for the writing goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines from many goroutines arrive whole, each goroutine's in its order,
// and all of them by Flush.
func TestBehindOrderAndFlush(t *testing.T) {
	var out lockedBuffer
	b := NewBehind(&out, 512) // small: writers wait for room now and then
	defer b.Close()
	const writers, lines = 8, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("w=%d i=%03d %s\n", w, i, strings.Repeat("x", i%40))
				if n, err := b.Write([]byte(line)); n != len(line) || err != nil {
					t.Errorf("Write = %d, %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines written through, want %d", len(got), writers*lines)
	}
	next := make([]int, writers)
	for _, line := range got {
		var w, i int
		var rest string
		if _, err := fmt.Sscanf(line, "w=%d i=%d %s", &w, &i, &rest); err != nil && i%40 != 0 {
			t.Fatalf("a broken line %q: %v", line, err)
		}
		if want := strings.Repeat("x", i%40); rest != want {
			t.Fatalf("line %q is not whole", line)
		}
		if i != next[w] {
			t.Fatalf("writer %d: line %d came where %d was due", w, i, next[w])
		}
		next[w]++
	}
}

// Write returns before the line is written; past max bytes gathered, it
// waits for the writer; Flush waits for what was written before it.
func TestBehindWaitsOnlyWhenFull(t *testing.T) {
	g := newGate()
	b := NewBehind(g, 10)
	defer func() {
		go func() { // let Close's last writes through
			for range g.entered {
				g.release <- nil
			}
		}()
		b.Close()
		close(g.entered)
	}()

	if _, err := b.Write([]byte("aaaa\n")); err != nil { // handed over at once
		t.Fatal(err)
	}
	if p := <-g.entered; string(p) != "aaaa\n" {
		t.Fatalf("first write through %q", p)
	}
	// While that write is held, the next lines gather without waiting.
	b.Write([]byte("bbbb\n"))
	b.Write([]byte("cccc\n"))
	// A line that would pass max waits for room.
	wrote := make(chan struct{})
	go func() {
		b.Write([]byte("dddd\n"))
		close(wrote)
	}()
	flushed := make(chan error)
	go func() { flushed <- b.Flush() }()
	select {
	case <-wrote:
		t.Fatal("a write past max bytes returned while the writer was held")
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while the writer was held", err)
	default:
	}
	g.release <- nil                                   // aaaa
	if p := <-g.entered; string(p) != "bbbb\ncccc\n" { // gathered, in one write
		t.Fatalf("second write through %q", p)
	}
	<-wrote // there was room again
	g.release <- nil
	if p := <-g.entered; string(p) != "dddd\n" {
		t.Fatalf("third write through %q", p)
	}
	g.release <- nil
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(); err != nil { // the first may have been before dddd
		t.Fatal(err)
	}
	if got := g.String(); got != "aaaa\nbbbb\ncccc\ndddd\n" {
		t.Fatalf("written %q", got)
	}
}

// A failed write is reported once, by the next call; Close writes what
// gathered, and later writes go straight through.
func TestBehindErrorAndClose(t *testing.T) {
	g := newGate()
	b := NewBehind(g, 0)
	b.Write([]byte("one\n"))
	<-g.entered
	broken := errors.New("disk full")
	g.release <- broken
	if err := b.Flush(); !errors.Is(err, broken) {
		t.Fatalf("Flush after a failed write = %v, want %v", err, broken)
	}
	if err := b.Flush(); err != nil {
		t.Fatalf("the error was reported twice: %v", err)
	}

	b.Write([]byte("two\n"))
	<-g.entered
	closed := make(chan error)
	go func() { closed <- b.Close() }()
	g.release <- nil
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	go func() {
		<-g.entered
		g.release <- nil
	}()
	if _, err := b.Write([]byte("three\n")); err != nil {
		t.Fatal(err)
	}
	if got := g.String(); got != "two\nthree\n" {
		t.Fatalf("written %q", got)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

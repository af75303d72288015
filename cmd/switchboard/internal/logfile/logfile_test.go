package logfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "serve.log")
	w, err := Open(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := func(i int) string { return fmt.Sprintf("time=2026-01-01T00:00:%02dZ level=INFO msg=x n=%03d\n", i, i) } // 50 bytes
	for i := range 9 {
		if _, err := w.Write([]byte(line(i))); err != nil {
			t.Fatal(err)
		}
	}
	// Two lines a file: 0-1 and 2-3 are gone, 4-5 in .2, 6-7 in .1, 8 current.
	want := map[string]string{path + ".2": line(4) + line(5), path + ".1": line(6) + line(7), path: line(8)}
	for p, content := range want {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("%s = %q, want %q", filepath.Base(p), got, content)
		}
		if runtime.GOOS != "windows" {
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Errorf("a third rotated file was kept")
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Dir(path))
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
		}
	}
	var out bytes.Buffer
	if err := Show(t.Context(), &out, path, Filter{}, false, 0); err != nil {
		t.Fatal(err)
	}
	if want := line(4) + line(5) + line(6) + line(7) + line(8); out.String() != want {
		t.Errorf("Show = %q, want %q", out.String(), want)
	}
}

// Two writers on one file, as two serve processes: the second notices the
// first rotated and writes to the new file.
func TestRotationTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.log")
	a, err := Open(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l := strings.Repeat("x", 39) + "\n" // 40 bytes
	a.Write([]byte("a1 " + l))
	b.Write([]byte("b1 " + l))
	a.Write([]byte("a2 " + l)) // over 100: a rotates
	b.Write([]byte("b2 " + l)) // b's file was renamed and is over: b reopens
	got, _ := os.ReadFile(path)
	if want := "a2 " + l + "b2 " + l; string(got) != want {
		t.Errorf("current file = %q, want %q", got, want)
	}
	old, _ := os.ReadFile(path + ".1")
	if want := "a1 " + l + "b1 " + l; string(old) != want {
		t.Errorf("rotated file = %q, want %q", old, want)
	}
}

func TestFilter(t *testing.T) {
	lines := []string{
		`time=2026-01-01T10:00:00.000Z level=INFO msg=call session=s1 server=web tool=echo`,
		`time=2026-01-01T11:00:00.000Z level=INFO msg=stderr session=s1 server=local line="server=web is not me"`,
		`time=2026-01-01T12:00:00.000Z level=WARN msg="a server=web inside a message" session=s1`,
		`time=2026-01-01T13:00:00.000Z level=INFO msg=call session=s1 server="web"`,
		`garbage without fields`,
	}
	since, _ := time.Parse(time.RFC3339, "2026-01-01T11:30:00Z")
	cases := []struct {
		name string
		f    Filter
		want []int
	}{
		{"all", Filter{}, []int{0, 1, 2, 3, 4}},
		{"server", Filter{Server: "web"}, []int{0, 3}},
		{"since", Filter{Since: since}, []int{2, 3}},
		{"both", Filter{Server: "web", Since: since}, []int{3}},
		{"other", Filter{Server: "we"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []int
			for i, l := range lines {
				if c.f.Match(l) {
					got = append(got, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("matched %v, want %v", got, c.want)
			}
		})
	}
}

func TestField(t *testing.T) {
	line := `time=T level=INFO msg="say \"hi\" k=v" k2=v2 empty= q="a b"`
	for key, want := range map[string]string{"time": "T", "msg": `say "hi" k=v`, "k2": "v2", "empty": "", "q": "a b"} {
		if got, ok := Field(line, key); !ok || got != want {
			t.Errorf("Field(%q) = %q, %v, want %q", key, got, ok, want)
		}
	}
	if _, ok := Field(line, "k"); ok {
		t.Errorf("found k inside a quoted value")
	}
}

func FuzzField(f *testing.F) {
	f.Add(`time=T msg="a \" b" server=x`)
	f.Add(`="" = "`)
	f.Fuzz(func(t *testing.T, line string) {
		Field(line, "server")
		Filter{Server: "x", Since: time.Unix(0, 0)}.Match(line)
	})
}

// lineSink is a writer that signals each write, so a test waits for lines
// to arrive rather than for time to pass.
type lineSink struct {
	mu    sync.Mutex
	buf   strings.Builder
	wrote chan struct{}
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *lineSink) waitFor(t *testing.T, want string) {
	t.Helper()
	for {
		s.mu.Lock()
		got := s.buf.String()
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-s.wrote:
		case <-t.Context().Done():
			t.Fatalf("never saw %q; got %q", want, got)
		}
	}
}

func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.log")
	w, err := Open(path, 200)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("time=2026-01-01T00:00:00Z msg=before server=a\n"))
	sink := &lineSink{wrote: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Show(ctx, sink, path, Filter{Server: "a"}, true, 5*time.Millisecond) }()
	sink.waitFor(t, "msg=before")
	w.Write([]byte("time=2026-01-01T00:00:01Z msg=skipped server=b\n"))
	w.Write([]byte("time=2026-01-01T00:00:02Z msg=after server=a\n"))
	sink.waitFor(t, "msg=after")
	// Rotate: the next lines go to a new file.
	for i := range 5 {
		fmt.Fprintf(w, "time=2026-01-01T00:00:03Z msg=rotated%d server=a\n", i)
	}
	sink.waitFor(t, "msg=rotated4")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := sink.buf.String()
	if strings.Contains(got, "skipped") {
		t.Errorf("a line of another server passed: %q", got)
	}
	for i := range 5 {
		if n := strings.Count(got, fmt.Sprintf("msg=rotated%d ", i)); n != 1 {
			t.Errorf("rotated%d shown %d times, want once: %q", i, n, got)
		}
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("the file was not rotated: %v", err)
	}
}

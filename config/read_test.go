package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unixSocket binds a Unix socket at path.
func unixSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("listening on a Unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
}

// within runs f and fails the test if it has not returned after a long
// while. Reading a FIFO blocks until a writer comes, that is forever here:
// the bound only turns such a hang into a failure, it measures nothing.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30s", what)
		panic("unreachable")
	}
}

// TestNonRegularFiles checks that a configuration file that is not a
// regular file is refused at once with an error that names it and says
// what it is, instead of blocking (a FIFO) or reading forever (a device).
func TestNonRegularFiles(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"fifo", mkfifo, "it is a FIFO (named pipe), not a regular file"},
		{"socket", unixSocket, "it is a socket, not a regular file"},
		{"character device", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "it is a character device, not a regular file"},
		{"symlink to a fifo", func(t *testing.T, path string) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			mkfifo(t, fifo)
			if err := os.Symlink(fifo, path); err != nil {
				t.Fatal(err)
			}
		}, "it is a FIFO (named pipe), not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			// A short socket path: sun_path holds about a hundred bytes.
			d.Explicit = filepath.Join(t.TempDir(), "c")
			tt.make(t, d.Explicit)
			writeFile(t, pathsOf(d).user, `{"mcpServers": {"good": {"command": "good"}}}`)
			c := within(t, "Load", func() *Config { return Load(d) })
			if !errors.Is(c.Err(), ErrInvalid) {
				t.Fatalf("Err: got %v, want ErrInvalid", c.Err())
			}
			want := d.Explicit + ": cannot read: " + tt.want
			if got := problemText(c.Errors()); !strings.Contains(got, want) {
				t.Errorf("errors: got %q, want %q", got, want)
			}
		})
	}
}

// TestNonRegularHostFile checks the same of a host file an import reads:
// a warning, nothing imported, no hang.
func TestNonRegularHostFile(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "mcp.json")
	mkfifo(t, path)
	imp := within(t, "ImportHost", func() *Import { return ImportHost(Dirs{Home: home}, "cursor") })
	want := path + ": cannot read: it is a FIFO (named pipe), not a regular file"
	if len(imp.Servers) != 0 || !strings.Contains(problemText(imp.Problems), want) {
		t.Errorf("got servers %v, problems %q; want none and a warning %q", imp.Servers, problemText(imp.Problems), want)
	}
}

// serversJSON is a file that defines n stdio servers named prefix0, prefix1, ….
func serversJSON(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("{\"mcpServers\": {")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %q: {\"command\": \"x\"}", prefix+strconv.Itoa(i))
	}
	b.WriteString("\n}}\n")
	return b.String()
}

// TestServerBound checks MaxServers, for one file and for all files
// together: at the bound everything loads; past it the configuration fails
// closed with an error that gives the count, the limit and where.
func TestServerBound(t *testing.T) {
	tests := []struct {
		name          string
		user, explict string
		want          string // "" for no error
	}{
		{"one file at the bound", serversJSON("s", MaxServers), "{}", ""},
		{"one file past the bound", serversJSON("s", MaxServers+1), "{}",
			fmt.Sprintf("config.json:%d:3: mcpServers: %d servers is over the limit of %d (hint: remove the servers you do not use)", MaxServers+2, MaxServers+1, MaxServers)},
		{"a file of 100,000", serversJSON("s", 100_000), "{}",
			fmt.Sprintf("mcpServers: 100000 servers is over the limit of %d", MaxServers)},
		{"two files at the bound, overlapping", serversJSON("s", MaxServers), serversJSON("s", MaxServers), ""},
		{"two files past the bound together", serversJSON("a", MaxServers/2+1), serversJSON("b", MaxServers/2),
			fmt.Sprintf("explicit.json: the configuration files together define %d servers, over the limit of %d (hint: remove the servers you do not use)", MaxServers+1, MaxServers)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			writeFile(t, pathsOf(d).user, tt.user)
			writeFile(t, d.Explicit, tt.explict)
			c := Load(d)
			if tt.want == "" {
				noErrors(t, c)
				if len(c.Servers) != MaxServers {
					t.Errorf("got %d servers, want %d", len(c.Servers), MaxServers)
				}
				return
			}
			if !errors.Is(c.Err(), ErrInvalid) {
				t.Fatalf("Err: got %v, want ErrInvalid", c.Err())
			}
			if got := problemText(c.Errors()); !strings.Contains(got, tt.want) {
				t.Errorf("errors: got %q, want %q", got, tt.want)
			}
		})
	}
}

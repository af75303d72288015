//go:build unix

package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// TestDefaultSpillDirTaken takes the default spill directory's name in the
// temporary directory first, as another user on a shared machine could:
// open to everyone, or (as root, for another user) owned by someone else.
// The engine spills in a fresh directory of its own instead, private, and
// removes it at Close; nothing is written where the other user can reach.
func TestDefaultSpillDirTaken(t *testing.T) {
	for _, tc := range []struct {
		name string
		take func(t *testing.T, dir string)
	}{
		{"open to everyone", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"readable by others", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"another user's", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("making a directory another user owns needs root; this test runs as user", os.Getuid())
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			taken := filepath.Join(tmp, "switchboard-spill-"+strconv.Itoa(os.Getuid()))
			if err := os.Mkdir(taken, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.take(t, taken)
			e, err := New(context.Background(), userConfig(t, t.TempDir(), map[string]def{}, nil), &Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			dir := e.opts.SpillDir
			if dir == taken || !strings.HasPrefix(dir, tmp) {
				t.Errorf("spill directory %s, want a fresh one in %s, not %s", dir, tmp, taken)
			}
			if err := privfile.CheckPrivate(dir); err != nil {
				t.Errorf("the fresh directory: %v", err)
			}
			text, err := e.spill.Text("call-x", strings.Repeat("x\n", 100000))
			if err != nil || text.Spill == nil || !strings.HasPrefix(text.Spill.Path, dir+string(filepath.Separator)) {
				t.Fatalf("spilling: %+v, %v; want a file in %s", text.Spill, err, dir)
			}
			if entries, _ := os.ReadDir(taken); len(entries) != 0 {
				t.Errorf("%s holds %v, want nothing written there", taken, entries)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("after Close, %s: %v, want it removed", dir, err)
			}
		})
	}
}

//go:build unix

package bound

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSpillRefusesBaseNotPrivate makes the spill base first, as another
// user on a shared machine would in the system's temporary directory: open
// to everyone, or (as root, for another user) owned by someone else. A
// spill there is refused, saying why and what to do, and Sweep removes
// nothing from it.
func TestSpillRefusesBaseNotPrivate(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, base string)
		want string
	}{
		{"open to everyone", func(t *testing.T, base string) {
			if err := os.Chmod(base, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "its mode 0777 lets other users reach it"},
		{"another user's", func(t *testing.T, base string) {
			if os.Getuid() != 0 {
				t.Skip("making a directory another user owns needs root; this test runs as user", os.Getuid())
			}
			if err := os.Chown(base, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "it belongs to user 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "spill")
			if err := os.Mkdir(base, 0o700); err != nil {
				t.Fatal(err)
			}
			planted := filepath.Join(base, "p1-planted")
			if err := os.Mkdir(planted, 0o700); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-2 * time.Hour) // unlocked and old: Sweep would take it
			if err := os.Chtimes(planted, old, old); err != nil {
				t.Fatal(err)
			}
			tc.make(t, base)
			s := NewSpiller(base, Limits{MaxBytes: 10, MaxLines: 10})
			defer s.Close()
			_, err := s.Text("call-x", strings.Repeat("x", 100))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "refusing the spill directory "+base) || !strings.Contains(err.Error(), "hint:") {
				t.Errorf("spilling: %v, want it refused saying %q and what to do", err, tc.want)
			}
			if _, err := Sweep(base, 0); err == nil {
				t.Error("Sweep: no error, want the base refused")
			}
			if _, err := os.Stat(planted); err != nil {
				t.Errorf("Sweep removed what was in a base not the user's: %v", err)
			}
		})
	}
}

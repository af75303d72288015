//go:build unix

package privfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is a user id that is not the test's, for paths another user owns.
const nobody = 65534

// chownNobody gives path to another user, which only root can do: the test
// is skipped otherwise.
func chownNobody(t *testing.T, path string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root; this test runs as user", os.Getuid())
	}
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPrivate(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode, isDir bool) string {
		p := filepath.Join(dir, name)
		var err error
		if isDir {
			err = os.Mkdir(p, mode)
		} else {
			err = os.WriteFile(p, nil, mode)
		}
		if err == nil {
			err = os.Chmod(p, mode) // past the umask
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"private directory", mk("d700", 0o700, true), ""},
		{"open directory", mk("d777", 0o777, true), "its mode 0777 lets other users reach it"},
		{"group directory", mk("d750", 0o750, true), "its mode 0750 lets other users reach it"},
		{"private file", mk("f600", 0o600, false), ""},
		{"readable file", mk("f644", 0o644, false), "its mode 0644 lets other users read it"},
		{"writable file", mk("f622", 0o622, false), "its mode 0622 lets other users change it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPrivate(tc.path)
			if tc.want == "" {
				if err != nil {
					t.Errorf("got %v, want private", err)
				}
				return
			}
			if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("owned", func(t *testing.T) {
		// CheckOwned lets others see, not change.
		for mode, ok := range map[os.FileMode]bool{0o700: true, 0o755: true, 0o775: false, 0o757: false, 0o777: false} {
			p := mk(fmt.Sprintf("owned%04o", mode), mode, true)
			if err := CheckOwned(p); (err == nil) != ok {
				t.Errorf("mode %04o: %v, want ok %v", mode, err, ok)
			}
		}
	})
	t.Run("symbolic link", func(t *testing.T) {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(mk("target", 0o700, true), link); err != nil {
			t.Fatal(err)
		}
		if err := CheckPrivate(link); !errors.Is(err, ErrNotPrivate) {
			t.Errorf("got %v, want not private", err)
		}
	})
	t.Run("another user's", func(t *testing.T) {
		p := mk("theirs", 0o700, true)
		chownNobody(t, p)
		if err := CheckPrivate(p); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Errorf("got %v, want it refused as another user's", err)
		}
	})
}

// TestReadPrivate reads what --token-file may name: a private regular file
// within the bound is read; a FIFO and a device are refused without
// blocking or reading for ever, and a file others may read, or that
// another user owns, or that is too large, is refused unread.
func TestReadPrivate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, err := ReadPrivate(write("ok", "secret", 0o600), 16); err != nil || string(got) != "secret" {
		t.Errorf("a private file: %q, %v", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"FIFO", fifo, "a FIFO"},
		{"device", "/dev/zero", "a character device"},
		{"readable by others", write("open", "secret", 0o644), "lets other users read it"},
		{"too large", write("large", strings.Repeat("x", 17), 0o600), "over the limit of 16"},
	} {
		if got, err := ReadPrivate(tc.path, 16); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q, %v; want an error saying %q", tc.name, got, err, tc.want)
		}
	}
	t.Run("another user's", func(t *testing.T) {
		p := write("theirs", "secret", 0o600)
		chownNobody(t, p)
		if _, err := ReadPrivate(p, 16); !errors.Is(err, ErrNotPrivate) {
			t.Errorf("got %v, want it refused as another user's", err)
		}
	})
}

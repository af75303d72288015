package samefile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard")
	other := filepath.Join(dir, "other")
	for _, p := range []string{file, other} {
		if err := os.WriteFile(p, []byte("same bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Logf("no symbolic link here (%v): checked without one", err)
		link = file
	}
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"itself", file, file, true},
		{"through a link", link, file, true},
		{"another spelling", filepath.Join(dir, ".", "switchboard"), file, true},
		{"another file, same bytes", other, file, false},
		{"a missing file", filepath.Join(dir, "missing"), file, false},
		{"two missing files", filepath.Join(dir, "missing"), filepath.Join(dir, "missing"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is(tt.a, tt.b); got != tt.want {
				t.Errorf("Is(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

package switchboard_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeGoExample builds the README's "Use it from Go" program against
// this module, so that the example stays true as the API changes. It is
// compiled in place through an overlay: nothing is written into the tree.
func TestReadmeGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src := goBlockAfter(t, string(readme), "## Use it from Go")
	if strings.Contains(src, "/internal/") {
		t.Errorf("the README's Go example imports an internal package:\n%s", src)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join("readme-example-overlay", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{abs: file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool(), "build", "-overlay", overlayFile, "-o", filepath.Join(dir, "example"), "./readme-example-overlay")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go example does not build: %v\n%s\n%s", err, out, src)
	}
}

// goBlockAfter returns the first ```go block after the heading.
func goBlockAfter(t *testing.T, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```go\n")
	if !ok {
		t.Fatalf("README.md has no Go block after %q", heading)
	}
	src, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("README.md: the Go block after %q is not closed", heading)
	}
	return src
}

// goTool returns the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

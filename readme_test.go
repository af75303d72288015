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
	buildReadmeBlock(t, "## Use it from Go")
}

// TestReadmeStoreExample builds the README's program that opens the
// shared store, so that it stays true as the API changes.
func TestReadmeStoreExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	buildReadmeBlock(t, "### Share state between replicas")
}

// TestReadmePackagedExample builds the README's program with a packaged
// server and a facade, checks that it stays short, and runs it in a home
// of its own: the facade answers with its fixed argument.
func TestReadmePackagedExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	bin, src := buildReadmeBlock(t, "### Ship your own servers")
	if n := strings.Count(src, "\n"); n >= 40 {
		t.Errorf("the README's packaged example is %d lines, want under 40", n)
	}
	home := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "USERPROFILE=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the README's packaged example: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "Lisbon: sunny for 3 days"; got != want {
		t.Errorf("the README's packaged example prints %q, want %q", got, want)
	}
}

// buildReadmeBlock builds the first Go block after a heading of the README
// and returns the program's path and its source.
func buildReadmeBlock(t *testing.T, heading string) (bin, src string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src = goBlockAfter(t, string(readme), heading)
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
	bin = filepath.Join(dir, "example")
	cmd := exec.Command(goTool(), "build", "-overlay", overlayFile, "-o", bin, "./readme-example-overlay")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go example after %q does not build: %v\n%s\n%s", heading, err, out, src)
	}
	return bin, src
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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgram builds the example and runs it as a user would, in a home of
// its own (no configured servers), and checks what it prints: the facade
// is found and answers with the fixed city and units, and the tool behind
// it is out of reach.
func TestProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "packaged")
	build := exec.Command(goTool(), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "USERPROFILE=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("running the example: %v\n%s%s", err, out, stderr)
	}
	got := string(out)
	for _, want := range []string{
		"registered tool: mcp",
		"weather_lisbon_forecast",
		"Lisbon, next 3 days: 19°C, 20°C, 21°C",
		`unknown tool "forecast" on "weather"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the example's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Oslo, next") {
		t.Errorf("the example reached the hidden tool:\n%s", got)
	}
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

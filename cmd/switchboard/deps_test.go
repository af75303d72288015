package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShippedDeps checks what the switchboard binary is built from: the
// search evaluation (cmd/searcheval) and the tokenizer the tests measure
// descriptions with are development tools, and must not be linked in; gRPC
// and the protobuf runtime were 10 MB of the binary and a fifth of its
// start-up for the OTLP exporter alone (telemetry/otlphttp.go replaced it),
// and must not come back unnoticed. Nor may packages whose initialisation
// reaches beyond environment variables (issue 30): termenv and lipgloss ask
// the terminal or the terminfo database (and run "tmux info"), bubbletea v1
// asked for the background colour, bubbles links both and a clipboard
// library that searches $PATH; see TestSilentTerminal.
//
// github.com/dop251/goja (code mode's interpreter, internal/script) is let
// in: pure Go, and its initialisation, with the packages it brings
// (regexp2, pprof/profile, x/text/collate), costs about 1 ms and 270 KB
// and does no I/O (issue 31; docs/codemode.md).
//
// github.com/coreos/go-oidc and github.com/go-jose/go-jose (settings.identity,
// issue 34) are let in: their initialisation is 3 packages, 0.03 ms and about
// 2 KB, with no I/O. The identity tests' OpenID provider (github.com/zitadel)
// is a test-only module of its own and must never be linked in.
func TestShippedDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		for _, banned := range []string{"/internal/searchbench", "github.com/pkoukk/tiktoken-go", "github.com/zitadel", "/internal/testkit/"} {
			if strings.Contains(d, banned) {
				t.Errorf("the switchboard binary imports %s, which is for development only", d)
			}
		}
		for _, initIO := range []string{"github.com/muesli/termenv", "github.com/charmbracelet/lipgloss", "charm.land/lipgloss",
			"github.com/charmbracelet/bubbletea", "github.com/charmbracelet/bubbles", "charm.land/bubbles", "github.com/atotto/clipboard"} {
			if d == initIO || strings.HasPrefix(d, initIO+"/") {
				t.Errorf("the switchboard binary imports %s, whose package initialisation reaches the terminal or beyond the environment: see docs/bench.md (no terminal I/O at start)", d)
			}
		}
		for _, heavy := range []string{"google.golang.org/grpc", "google.golang.org/protobuf"} {
			if strings.HasPrefix(d, heavy) {
				t.Errorf("the switchboard binary imports %s: see docs/bench.md (start-up and idle memory) before letting it in", d)
			}
		}
	}
}

//go:build !windows

package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"op read op://vault/gh/token", []string{"op", "read", "op://vault/gh/token"}, false},
		{`sh -c 'printf "%s" $X'`, []string{"sh", "-c", `printf "%s" $X`}, false},
		{`a "b c" d\ e "q\"x"`, []string{"a", "b c", "d e", `q"x`}, false},
		{"  ", nil, true},
		{"a 'b", nil, true},
		{`a "b`, nil, true},
	} {
		got, err := splitCommand(tc.in)
		if (err != nil) != tc.err || !cmp.Equal(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestRunCommand runs real commands: output without trailing line breaks;
// failures, timeouts and floods are errors that never hold what the
// command printed.
func TestRunCommand(t *testing.T) {
	ctx := context.Background()
	out, err := RunCommand(ctx, []string{"printf", "tok3n\n\n"})
	if err != nil || string(out) != "tok3n" {
		t.Errorf("printf: %q, %v", out, err)
	}
	// stdin is closed: cat ends at once, with nothing.
	if out, err := RunCommand(ctx, []string{"cat"}); err != nil || len(out) != 0 {
		t.Errorf("cat: %q, %v; want nothing read from stdin", out, err)
	}
	_, err = RunCommand(ctx, []string{"sh", "-c", "echo out-s3cret; echo err-s3cret >&2; exit 3"})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), `"sh" failed (exit status 3`) {
		t.Errorf("a failing command: %v; want its status, not its output", err)
	}
	_, err = RunCommand(ctx, []string{"head", "-c", "2000000", "/dev/zero"})
	if err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Errorf("a flood: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond) // stands for the 10 s bound
	defer cancel()
	_, err = RunCommand(short, []string{"sleep", "30"})
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("a command that hangs: %v", err)
	}
	if _, err := RunCommand(ctx, []string{"/nonexistent/tool"}); err == nil {
		t.Errorf("a missing command ran")
	}
}

// TestCommandReferences: ${cmd:…} (and "!COMMAND ARGS" as a whole value,
// pi-mcp-adapter's spelling) resolves in env and headers of the user's own
// files, names the server and field when it fails, and is
// refused in project and imported files and outside env and headers.
func TestCommandReferences(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"mcpServers": {
  "a": {"command": "x", "env": {"GITHUB_TOKEN": "${cmd:printf gh-t0ken}", "EMPTY": "x${cmd:true}"}},
  "h": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${cmd:printf 'a b'}"}},
  "bang": {"url": "https://example.com/mcp", "headers": {"X-Api-Key": "!printf 'k e y'"}}
}}`)
	c := Load(d)
	noErrors(t, c)
	run := Lookup{Commands: func(argv []string) ([]byte, error) { return RunCommand(context.Background(), argv) }}
	h, _ := c.Server("h")
	res, err := h.Resolve(run)
	if err != nil || res.Headers["Authorization"].Reveal() != "Bearer a b" {
		t.Fatalf("headers: %v", err)
	}
	bang, _ := c.Server("bang")
	if res, err := bang.Resolve(run); err != nil || res.Headers["X-Api-Key"].Reveal() != "k e y" {
		t.Fatalf("a !command value: %v", err)
	}
	a, _ := c.Server("a")
	_, err = a.Resolve(run)
	if err == nil || !strings.Contains(err.Error(), `server "a"`) || !strings.Contains(err.Error(), "mcpServers.a.env.EMPTY") || !strings.Contains(err.Error(), "printed nothing") {
		t.Errorf("a command that prints nothing: %v; want the server and the field named", err)
	}
	if _, err := a.Resolve(Lookup{}); err == nil || !strings.Contains(err.Error(), "only when the server connects") {
		t.Errorf("no runner: %v", err)
	}
	if refs := a.References(); len(refs) != 0 {
		t.Errorf("References = %v, want no variables", refs)
	}

	for _, tc := range []struct {
		kind Kind
		text string
		want string
	}{
		{KindProject, srv(`{"command": "x", "env": {"T": "${cmd:printf x}"}}`), "allowed only in your own user-global files"},
		{KindProjectShared, srv(`{"command": "x", "env": {"T": "${cmd:printf x}"}}`), "allowed only in your own user-global files"},
		{KindImport, srv(`{"command": "x", "env": {"T": "${cmd:printf x}"}}`), "allowed only in your own user-global files"},
		{KindUser, srv(`{"url": "https://${cmd:hostname}/mcp"}`), "allowed only in env and headers"},
		{KindUser, srv(`{"command": "x", "env": {"T": "${cmd:printf 'x}"}}`), "unterminated ' quote"},
		{KindProject, srv(`{"command": "x", "env": {"T": "!printf x"}}`), "allowed only in your own user-global files"},
		{KindUser, srv(`{"command": "x", "env": {"T": "!printf 'x"}}`), "!COMMAND ARGS"},
	} {
		_, problems, _ := decode(tc.kind, tc.text)
		if len(problems) == 0 || !strings.Contains(problems[0].Error(), tc.want) {
			t.Errorf("%s %s: problems %v, want %q", tc.kind, tc.text, problems, tc.want)
		}
	}
}

// FuzzSplitCommand: splitting never panics, and what it splits has no
// empty command.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`op read "a b"`, `sh -c 'x'`, `a\ b`, `"`, `'`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := splitCommand(s)
		if err == nil && len(args) == 0 {
			t.Fatalf("%q: no error and no command", s)
		}
	})
}

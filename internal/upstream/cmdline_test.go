package upstream

import (
	"strings"
	"testing"
)

func TestCreationFlags(t *testing.T) {
	for _, tt := range []struct {
		console bool
		want    uint32
	}{
		{true, createSuspended | createNewProcessGroup},
		{false, createSuspended | createNewProcessGroup | createNoWindow},
	} {
		if got := creationFlags(tt.console); got != tt.want {
			t.Errorf("creationFlags(console %v) = %#x, want %#x", tt.console, got, tt.want)
		}
	}
}

func TestComspec(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{`ComSpec=D:\shells\cmd.exe`, `SystemRoot=C:\Windows`}, `D:\shells\cmd.exe`},
		{[]string{`SYSTEMROOT=E:\Win\`}, `E:\Win\System32\cmd.exe`},
		{nil, `C:\Windows\System32\cmd.exe`},
	} {
		if got := comspec(tt.env); got != tt.want {
			t.Errorf("comspec(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestIsBatch(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\nodejs\npx.cmd`: true, `C:\x\RUN.BAT`: true, `C:\nodejs\node.exe`: false, `npx`: false, `x.cmd.exe`: false,
	} {
		if got := isBatch(path); got != want {
			t.Errorf("isBatch(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestBatchCommandLine: cmd.exe reads every argument as one literal word,
// whatever its metacharacters, and the program behind the batch file gets
// it back whole; what no quoting protects is refused.
func TestBatchCommandLine(t *testing.T) {
	const shell = `C:\Windows\System32\cmd.exe`
	const npx = `C:\Program Files\nodejs\npx.cmd`
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", `C:\Users\me\My Documents`},
			`"C:\Windows\System32\cmd.exe" /d /e:on /v:off /s /c ""C:\Program Files\nodejs\npx.cmd" "-y" "@modelcontextprotocol/server-filesystem" "C:\Users\me\My Documents""`, ""},
		{[]string{"a&calc", "b|c", "<in>", "^(x)!", ""},
			`"C:\Windows\System32\cmd.exe" /d /e:on /v:off /s /c ""C:\Program Files\nodejs\npx.cmd" "a&calc" "b|c" "<in>" "^(x)!" """`, ""},
		// A trailing backslash would escape the closing quote for the C runtime.
		{[]string{`C:\dir\`, `a\\b\\`},
			`"C:\Windows\System32\cmd.exe" /d /e:on /v:off /s /c ""C:\Program Files\nodejs\npx.cmd" "C:\dir\\" "a\\b\\\\""`, ""},
		{[]string{"ok", `say "hi"`}, "", `argument 2 holds '"'`},
		{[]string{"%PATH%"}, "", `argument 1 holds '%'`},
		{[]string{"two\nlines"}, "", `argument 1 holds '\n'`},
	}
	for _, tt := range tests {
		got, err := batchCommandLine(shell, npx, tt.args)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("batchCommandLine(%q) = %q, %v; want an error with %q", tt.args, got, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("batchCommandLine(%q) =\n%s, %v; want\n%s", tt.args, got, err, tt.want)
		}
	}
	if _, err := batchCommandLine(shell, `C:\100%\x.cmd`, nil); err == nil || !strings.Contains(err.Error(), "its path holds '%'") {
		t.Errorf("a batch file whose path holds %% = %v, want it refused", err)
	}
}

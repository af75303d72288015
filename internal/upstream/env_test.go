package upstream

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindExecutable: each platform's shells' rules for finding a program,
// checked here for all three with the files that exist given as a list.
func TestFindExecutable(t *testing.T) {
	winEnv := []string{`Path=C:\Program Files\nodejs\;C:\Windows\system32`, "PATHEXT=.COM;.EXE;.BAT;.CMD;.VBS"}
	winFiles := []string{
		`C:\Program Files\nodejs\npx`, // npm's shell script for Git Bash, which Windows cannot run
		`C:\Program Files\nodejs\npx.cmd`,
		`C:\Program Files\nodejs\node.exe`,
		`C:\Windows\system32\cmd.exe`,
		`C:\tools\server.exe`,
		`C:\tools\run.bat`,
		`tools\local.cmd`,
	}
	unixEnv := []string{"PATH=/usr/local/bin::/usr/bin", "PATHEXT=.EXE"}
	unixFiles := []string{"/usr/bin/npx", "/usr/bin/npx.cmd", "./here"}
	tests := []struct {
		goos, file string
		env        []string
		files      []string
		want       string
		wantErr    error
	}{
		{"windows", "npx", winEnv, winFiles, `C:\Program Files\nodejs\npx.cmd`, nil},
		{"windows", "NODE", winEnv, winFiles, `C:\Program Files\nodejs\NODE.exe`, nil},
		{"windows", "node.exe", winEnv, winFiles, `C:\Program Files\nodejs\node.exe`, nil},
		{"windows", "cmd", winEnv, winFiles, `C:\Windows\system32\cmd.exe`, nil},
		{"windows", `C:\tools\server`, winEnv, winFiles, `C:\tools\server.exe`, nil},
		{"windows", `C:/tools/run`, winEnv, winFiles, `C:/tools/run.bat`, nil},
		{"windows", `tools\local`, winEnv, winFiles, `tools\local.cmd`, nil},
		{"windows", `C:\tools\missing`, winEnv, winFiles, "", fs.ErrNotExist},
		{"windows", "uvx", winEnv, winFiles, "", errNotInPathWindows},
		// Without PATHEXT, the four that Windows itself knows.
		{"windows", "npx", []string{`PATH=C:\Program Files\nodejs`}, winFiles, `C:\Program Files\nodejs\npx.cmd`, nil},
		// The PATH variable is found whatever its case; neither an empty
		// entry nor a relative one (tools, \tools on the current drive)
		// is searched.
		{"windows", "local", []string{`PATH=;tools`}, winFiles, "", errNotInPathWindows},
		{"windows", "local", []string{`PATH=.;\tools;C:tools`}, []string{`.\local.exe`, `\tools\local.exe`, `C:tools\local.exe`}, "", errNotInPathWindows},
		{"windows", "server", []string{`PATH=C:/tools`}, winFiles, `C:/tools\server.exe`, nil},
		{"windows", "server", []string{`PATH=\\host\share`}, []string{`\\host\share\server.exe`}, `\\host\share\server.exe`, nil},
		{"linux", "npx", unixEnv, unixFiles, "/usr/bin/npx", nil},
		{"darwin", "npx", unixEnv, unixFiles, "/usr/bin/npx", nil},
		// An empty entry is the current directory to a shell, and a
		// relative one a directory under it: neither is searched.
		{"linux", "here", unixEnv, unixFiles, "", errNotInPath},
		{"linux", "here", []string{"PATH=.:bin"}, []string{"./here", "bin/here"}, "", errNotInPath},
		{"darwin", "here", []string{"PATH=bin:/usr/bin"}, []string{"bin/here", "/usr/bin/here"}, "/usr/bin/here", nil},
		{"linux", "./bin/x", unixEnv, unixFiles, "./bin/x", nil}, // a path is the child's to find
		{"linux", "npx.cmd", unixEnv, []string{"/usr/bin/npx"}, "", errNotInPath},
		{"linux", "npx", []string{"Path=/usr/bin"}, unixFiles, "", errNotInPath}, // names are case-sensitive here
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.file, func(t *testing.T) {
			exists := func(p string) bool { return slices.Contains(tt.files, p) }
			if tt.goos == "windows" { // names differ neither by case nor by the kind of slash
				exists = func(p string) bool {
					return slices.ContainsFunc(tt.files, func(f string) bool {
						return strings.EqualFold(f, strings.ReplaceAll(p, "/", `\`))
					})
				}
			}
			got, err := findExecutable(tt.goos, tt.file, tt.env, exists)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("findExecutable = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestWithExts(t *testing.T) {
	exts := pathExts(".COM;.exe;;BAT")
	if want := []string{".com", ".exe", ".bat"}; !slices.Equal(exts, want) {
		t.Fatalf("pathExts = %q, want %q", exts, want)
	}
	for name, want := range map[string][]string{
		"npx":          {"npx.com", "npx.exe", "npx.bat"},
		"npx.EXE":      {"npx.EXE", "npx.EXE.com", "npx.EXE.exe", "npx.EXE.bat"},
		"my.server":    {"my.server.com", "my.server.exe", "my.server.bat"},
		`C:\a.b\tool`:  {`C:\a.b\tool.com`, `C:\a.b\tool.exe`, `C:\a.b\tool.bat`},
		`C:\a.exe\bat`: {`C:\a.exe\bat.com`, `C:\a.exe\bat.exe`, `C:\a.exe\bat.bat`},
	} {
		if got := withExts(name, exts); !slices.Equal(got, want) {
			t.Errorf("withExts(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestEnvCase: on Windows variable names match whatever their case, so
// the system's "Path" and "SystemRoot" reach a server and a server's own
// PATH replaces the base one; elsewhere case matters.
func TestEnvCase(t *testing.T) {
	environ := []string{`Path=C:\bin`, `SystemRoot=C:\Windows`, `ComSpec=C:\Windows\system32\cmd.exe`, "lc_all=C",
		"PROCESSOR_ARCHITECTURE=ARM64", `ProgramFiles(x86)=C:\Program Files (x86)`, "USERNAME=me",
		"GITHUB_TOKEN=x", `=C:=C:\work`}
	if got, want := baseEnv(environ, true), environ[:7]; !slices.Equal(got, want) {
		t.Errorf("baseEnv on Windows = %q, want %q", got, want)
	}
	if got, want := baseEnv(environ, false), []string{"PROCESSOR_ARCHITECTURE=ARM64", "USERNAME=me"}; !slices.Equal(got, want) {
		t.Errorf("baseEnv elsewhere = %q, want %q: case matters there", got, want)
	}
	base := []string{`Path=C:\bin`, "HOME=/h"}
	extra := map[string]string{"PATH": `C:\mine`}
	if diff := cmp.Diff([]string{"HOME=/h", `PATH=C:\mine`}, mergeEnvFold(base, extra, true)); diff != "" {
		t.Errorf("mergeEnv on Windows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`Path=C:\bin`, "HOME=/h", `PATH=C:\mine`}, mergeEnvFold(base, extra, false)); diff != "" {
		t.Errorf("mergeEnv elsewhere (-want +got):\n%s", diff)
	}
	if got := getenvFold(base, "PATH", true); got != `C:\bin` {
		t.Errorf("getenv(PATH) on Windows = %q", got)
	}
}

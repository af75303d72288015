package upstream

import (
	"fmt"
	"strings"
)

// How Windows starts a stdio server, as pure functions of the platform's
// facts so that they are tested on every platform (tree_windows.go uses
// them).

// Process creation flags (CreateProcess, "Process Creation Flags").
const (
	createSuspended       = 0x00000004
	createNewProcessGroup = 0x00000200
	createNoWindow        = 0x08000000
)

// creationFlags are the flags a stdio child is created with: suspended
// until it is in its job, and leading a new process group. Without a
// console of ours to share, the child gets one without a window: otherwise
// every server started from a desktop host would flash a console window.
func creationFlags(hasConsole bool) uint32 {
	f := uint32(createSuspended | createNewProcessGroup)
	if !hasConsole {
		f |= createNoWindow
	}
	return f
}

// isBatch reports whether path is a batch file, which Windows runs through
// cmd.exe.
func isBatch(path string) bool {
	lower := strings.ToLower(path)
	return strings.HasSuffix(lower, ".cmd") || strings.HasSuffix(lower, ".bat")
}

// comspec is the command interpreter that runs batch files: %ComSpec%,
// else cmd.exe in %SystemRoot%\System32.
func comspec(env []string) string {
	if c := getenvFold(env, "ComSpec", true); c != "" {
		return c
	}
	root := getenvFold(env, "SystemRoot", true)
	if root == "" {
		root = `C:\Windows`
	}
	return strings.TrimRight(root, `\`) + `\System32\cmd.exe`
}

// batchCommandLine is the command line that runs the batch file script
// with args through shell (cmd.exe), built so that cmd.exe reads every
// argument as one literal word: cmd.exe parses the line itself, before the
// batch file passes %* on to the program it starts (npx.cmd to node), and
// reads &, |, <, >, ^ and parentheses outside double quotes as its own.
//
// "/d" skips AutoRun commands, "/e:on" keeps the command extensions that
// npx.cmd needs, "/v:off" makes ! literal, and "/s /c" runs what is between
// the first and the last quote as it stands. Each argument is put in
// double quotes, where those characters are literal, with the backslashes
// that end it doubled so that the program's own parsing (the C runtime's)
// does not read the closing quote as escaped. An argument that no quoting
// keeps literal, one holding a double quote, a % (which cmd.exe expands
// even inside quotes) or a line break, is refused.
func batchCommandLine(shell, script string, args []string) (string, error) {
	words := make([]string, 0, len(args)+1)
	for i, a := range append([]string{script}, args...) {
		if j := strings.IndexAny(a, "\"%\r\n\x00"); j >= 0 {
			what := "argument " + fmt.Sprint(i)
			if i == 0 {
				what = "its path"
			}
			return "", fmt.Errorf("running batch file %s: %s holds %q, which cmd.exe would not pass on as written (hint: run the program that %s starts directly, such as node)", script, what, a[j], script)
		}
		words = append(words, cmdQuote(a))
	}
	return fmt.Sprintf(`%s /d /e:on /v:off /s /c "%s"`, cmdQuote(shell), strings.Join(words, " ")), nil
}

// cmdQuote puts s in double quotes, doubling the backslashes at its end.
func cmdQuote(s string) string {
	trail := len(s) - len(strings.TrimRight(s, `\`))
	return `"` + s + strings.Repeat(`\`, trail) + `"`
}

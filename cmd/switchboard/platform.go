package main

import (
	"os"
	"strings"
)

// What the CLI does differently per platform, as pure functions of the
// platform's facts, so that each platform's behaviour is tested on all.

// shellJoin quotes args for the shell a user of goos types commands into:
// a POSIX shell, or PowerShell on Windows.
func shellJoin(goos string, args []string) string {
	quote := shellQuote
	if goos == "windows" {
		quote = powerShellQuote
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = quote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// powerShellQuote quotes s for PowerShell: bare when it holds only
// characters PowerShell takes literally in an argument (Windows paths
// included), else in single quotes, where only a single quote is special
// and is doubled.
func powerShellQuote(s string) string {
	if s != "" && strings.Trim(s, `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=:,./\-`) == "" && s[0] != '-' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// withExe returns the program a host should be given for path: on
// Windows, a path (not a bare name, which the host looks up itself) with
// ".exe" added when it has no extension and only the .exe exists, since
// not every host adds the extension when it starts a program.
func withExe(goos, path string, exists func(string) bool) string {
	if goos != "windows" || !strings.ContainsAny(path, `/\`) {
		return path
	}
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if strings.Contains(base, ".") || exists(path) || !exists(path+".exe") {
		return path
	}
	return path + ".exe"
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// colorOK reports whether output to a terminal may be coloured: NO_COLOR
// (https://no-color.org: set and not empty) and TERM=dumb turn colour off;
// on Windows the console must also accept escape sequences (virtual
// terminal processing, which enableVT turns on where it can).
func colorOK(getenv func(string) string, vt bool) bool {
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb" && vt
}

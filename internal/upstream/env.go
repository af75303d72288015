package upstream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// baseEnvNames are the variables BaseEnv keeps: what a program needs to find
// executables, its home and temporary directories, its locale and terminal,
// and the proxy and certificate settings of the machine. Credentials are not
// among them: a server gets a secret only through its own env.
var baseEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ",
	"TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	// Windows: where the system, programs and the user's folders are, who
	// and what the machine is (Python and Node read these), matched without
	// case.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA",
	"LOCALAPPDATA", "USERPROFILE", "PROGRAMDATA", "PROGRAMFILES",
	"PROGRAMFILES(X86)", "PROGRAMW6432", "COMMONPROGRAMFILES", "ALLUSERSPROFILE",
	"PUBLIC", "HOMEDRIVE", "HOMEPATH", "USERNAME", "USERDOMAIN", "COMPUTERNAME",
	"OS", "PROCESSOR_ARCHITECTURE", "NUMBER_OF_PROCESSORS",
}

// BaseEnv returns the entries of environ (as os.Environ returns them) that a
// stdio server gets before its own env: PATH, HOME, USER, LOGNAME, SHELL,
// LANG, LANGUAGE, LC_*, TERM, TZ, the temporary and XDG base directories, the
// proxy variables and the certificate locations, and on Windows the
// system's own (SystemRoot, ComSpec, PATHEXT, APPDATA, …), whose names
// Windows spells in any case. It is the default of [Options.BaseEnv].
func BaseEnv(environ []string) []string { return baseEnv(environ, envFold) }

// envFold is true where variable names are case-insensitive (Windows:
// "Path" is PATH).
const envFold = runtime.GOOS == "windows"

func baseEnv(environ []string, fold bool) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue // Windows lists "=C:=C:\dir" entries, the cwd per drive
		}
		if hasPrefix(k, "LC_", fold) || slices.ContainsFunc(baseEnvNames, func(n string) bool { return sameName(n, k, fold) }) {
			out = append(out, kv)
		}
	}
	return out
}

// sameName compares two variable names, ignoring case when fold is set.
func sameName(a, b string, fold bool) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func hasPrefix(s, prefix string, fold bool) bool {
	return len(s) >= len(prefix) && sameName(s[:len(prefix)], prefix, fold)
}

// mergeEnv returns base with the entries of extra added, an entry of extra
// replacing one of base with the same name (ignoring case on Windows).
func mergeEnv(base []string, extra map[string]string) []string {
	return mergeEnvFold(base, extra, envFold)
}

func mergeEnvFold(base []string, extra map[string]string, fold bool) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for name := range extra {
			if sameName(name, k, fold) {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// getenv returns the value of key in env.
func getenv(env []string, key string) string { return getenvFold(env, key, envFold) }

func getenvFold(env []string, key string, fold bool) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && sameName(k, key, fold) {
			return v
		}
	}
	return ""
}

// lookPath finds the executable file, like exec.LookPath, but in the PATH the
// child will have rather than in ours; see findExecutable. dir is the
// child's working directory.
func lookPath(file, dir string, env []string) (string, error) {
	return findExecutable(runtime.GOOS, file, env, func(path string) bool {
		if dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return isExecutable(path)
	})
}

// isExecutable reports whether path is a file this system would run: a
// regular file, with an execute bit where there are mode bits.
func isExecutable(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || st.Mode()&0o111 != 0
}

// findExecutable finds file as the shells of goos do, in env's PATH, with
// isExec telling which files exist and would run. A name with a separator
// is not searched for: it is relative to the child's working directory, and
// on Windows given the first extension that makes it exist.
//
// Only absolute PATH entries are searched. An empty entry, which a Unix
// shell reads as the current directory, and a relative one such as "." or
// "node_modules/.bin" are skipped, as os/exec.LookPath refuses their
// results since Go 1.19: otherwise the directory a command is run from (a
// project someone else wrote) could plant a program under a server's
// name and have it run. When the only match is in such an entry, the error
// says so.
//
// On Windows a name is tried with each extension of PATHEXT (default
// .COM;.EXE;.BAT;.CMD) appended, in order, so that npx finds npx.cmd; the
// name as written is tried first only when it already ends in one of them
// (npm installs a shell script named npx beside npx.cmd, which Windows
// cannot run). Variable names, extensions and file names are compared
// without case, as Windows does.
func findExecutable(goos, file string, env []string, isExec func(string) bool) (string, error) {
	win := goos == "windows"
	candidates := func(base string) []string { return []string{base} }
	if win {
		exts := pathExts(getenvFold(env, "PATHEXT", true))
		candidates = func(base string) []string { return withExts(base, exts) }
	}
	if hasSeparator(goos, file) {
		for _, c := range candidates(file) {
			if !win || isExec(c) {
				return c, nil
			}
		}
		return "", &fs.PathError{Op: "finding", Path: file, Err: fs.ErrNotExist}
	}
	list, sep := ":", "/"
	if win {
		list, sep = ";", `\`
	}
	var skipped *string // the first relative entry that holds file
	for _, entry := range strings.Split(getenvFold(env, "PATH", win), list) {
		relative := !absDir(goos, entry)
		dir := entry
		if dir == "" {
			dir = "."
		}
		for _, c := range candidates(strings.TrimRight(dir, sep) + sep + file) {
			if relative {
				if skipped == nil && isExec(c) {
					skipped = &entry
				}
				continue
			}
			if isExec(c) {
				return c, nil
			}
		}
	}
	notFound := errNotInPath
	if win {
		notFound = errNotInPathWindows
	}
	if skipped != nil {
		notFound = &relativeEntryError{notFound, file, *skipped}
	}
	return "", &fs.PathError{Op: "finding", Path: file, Err: notFound}
}

// A relativeEntryError says that the program was found, but only in a
// PATH entry that is not searched.
type relativeEntryError struct {
	err       error // errNotInPath or errNotInPathWindows
	file, dir string
}

func (e *relativeEntryError) Error() string {
	entry := "an empty PATH entry"
	if e.dir != "" {
		entry = fmt.Sprintf("the relative PATH entry %q", e.dir)
	}
	return fmt.Sprintf("%v (the %q that %s finds was not run: only absolute PATH entries are searched, since a relative one names whatever directory switchboard runs in; hint: give the command's absolute path)", e.err, e.file, entry)
}

func (e *relativeEntryError) Unwrap() error { return e.err }

// absDir reports whether a PATH entry is an absolute directory on goos:
// /usr/bin; on Windows C:\bin or \\server\share (not \bin, which is
// relative to the current drive).
func absDir(goos, dir string) bool {
	if goos != "windows" {
		return strings.HasPrefix(dir, "/")
	}
	if len(dir) >= 3 && dir[1] == ':' && (dir[2] == '\\' || dir[2] == '/') {
		c := dir[0] | 0x20
		return 'a' <= c && c <= 'z'
	}
	return len(dir) >= 2 && (dir[0] == '\\' || dir[0] == '/') && (dir[1] == '\\' || dir[1] == '/')
}

// hasSeparator reports whether file names a path rather than a program to
// look for: it holds a slash, or on Windows a backslash or a drive (C:x).
func hasSeparator(goos, file string) bool {
	if goos == "windows" {
		return strings.ContainsAny(file, `/\`) || (len(file) >= 2 && file[1] == ':')
	}
	return strings.Contains(file, "/")
}

// pathExts parses PATHEXT: the extensions, lower case, each with its dot.
func pathExts(v string) []string {
	var exts []string
	for _, e := range strings.Split(v, ";") {
		if e = strings.ToLower(strings.TrimSpace(e)); e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		exts = append(exts, e)
	}
	if len(exts) == 0 {
		return []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// withExts lists the files a Windows shell tries for name: name itself when
// its extension is one of exts, then name with each of exts appended.
func withExts(name string, exts []string) []string {
	var out []string
	base := name[strings.LastIndexAny(name, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 && slices.Contains(exts, strings.ToLower(base[i:])) {
		out = append(out, name)
	}
	for _, e := range exts {
		out = append(out, name+e)
	}
	return out
}

var (
	errNotInPath        = errors.New("executable file not found in $PATH")
	errNotInPathWindows = errors.New("executable file not found in %PATH% with any extension of %PATHEXT%")
)

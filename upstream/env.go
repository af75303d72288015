package upstream

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	// Windows.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA",
	"LOCALAPPDATA", "USERPROFILE", "PROGRAMDATA", "PROGRAMFILES",
}

// BaseEnv returns the entries of environ (as os.Environ returns them) that a
// stdio server gets before its own env: PATH, HOME, USER, LOGNAME, SHELL,
// LANG, LANGUAGE, LC_*, TERM, TZ, the temporary and XDG base directories, the
// proxy variables and the certificate locations. It is the default of
// [Options.BaseEnv].
func BaseEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if strings.HasPrefix(k, "LC_") || contains(baseEnvNames, k) {
			out = append(out, kv)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// mergeEnv returns base with the entries of extra added, an entry of extra
// replacing one of base with the same name.
func mergeEnv(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// getenv returns the value of key in env.
func getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds the executable file, like exec.LookPath, but in the PATH the
// child will have rather than in ours. A name with a separator is used as is
// (relative to the child's working directory).
func lookPath(file string, env []string) (string, error) {
	if strings.ContainsRune(file, filepath.Separator) || strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(getenv(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		path := filepath.Join(dir, file)
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", &fs.PathError{Op: "finding", Path: file, Err: errNotInPath}
}

var errNotInPath = errors.New("executable file not found in $PATH")

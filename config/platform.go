package config

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/config/hosts"
	"github.com/switchboard-mcp/switchboard/internal/samefile"
)

// What differs between the platforms where Switchboard and the hosts keep
// their files, as pure functions of the platform's facts (GOOS and the
// environment), so that every platform's answers are tested on any of them.

// HomeDir is the user's home directory as the hosts find it: $HOME on Unix;
// on Windows %USERPROFILE%, which Node's os.homedir() and Go's
// os.UserHomeDir read (HOME, which Git Bash and MSYS2 set, is not what the
// hosts use), else %HOMEDRIVE%%HOMEPATH%, else HOME.
func HomeDir(goos string, getenv func(string) string) string {
	if goos != "windows" {
		return getenv("HOME")
	}
	if p := getenv("USERPROFILE"); p != "" {
		return p
	}
	if d, p := getenv("HOMEDRIVE"), getenv("HOMEPATH"); d != "" && p != "" {
		return d + p
	}
	return getenv("HOME")
}

// join joins path elements with the separator of d.GOOS (hosts.Join).
func (d Dirs) join(elem ...string) string { return hosts.Join(d.GOOS, elem...) }

// samePath reports whether a and b name the same directory: they are
// equal, or differ only in case and lead to the same file, as on Windows,
// on macOS's default file system and in case-folding directories of Linux.
// Paths that differ in case on a case-sensitive file system are different
// directories: their trust is not shared.
func samePath(a, b string) bool {
	return a == b || (strings.EqualFold(a, b) && samefile.Is(a, b))
}

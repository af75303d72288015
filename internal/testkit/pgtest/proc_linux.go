package pgtest

import (
	"os"
	"syscall"
)

// nobody is the unprivileged user and group the server runs as when the
// tests run as root (PostgreSQL refuses to run as root).
const nobody = 65534

// procAttr runs the server's programs as nobody when this process is root,
// and kills them if it dies.
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		a.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	return a
}

// tempDir makes the server's directory; as root, in /tmp (which nobody can
// reach, unlike a private $TMPDIR) and owned by nobody.
func tempDir() (string, error) {
	if os.Geteuid() != 0 {
		return os.MkdirTemp("", "pgtest-")
	}
	dir, err := os.MkdirTemp("/tmp", "pgtest-")
	if err != nil {
		return "", err
	}
	return dir, os.Chown(dir, nobody, nobody)
}

// chownForServer gives a file this process made to the server's user.
func chownForServer(path string) {
	if os.Geteuid() == 0 {
		os.Chown(path, nobody, nobody)
	}
}

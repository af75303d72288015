//go:build unix

package nginxtest

import (
	"os"
	"syscall"
)

// supported: nginxtest runs nginx on Unix.
const supported = true

// procAttr puts nginx in a process group of its own and, when the test
// runs as root, runs it as nobody.
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		a.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	return a
}

// quit asks nginx's master to finish gracefully.
func quit(pid int) { _ = syscall.Kill(pid, syscall.SIGQUIT) }

// terminate asks nginx's master to finish at once (a fast shutdown).
func terminate(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }

// killGroup ends nginx's process group: master and workers.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// hangup tells nginx's master to reload its configuration.
func hangup(pid int) { _ = syscall.Kill(pid, syscall.SIGHUP) }

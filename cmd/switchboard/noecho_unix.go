//go:build linux || darwin

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns off the echo of the terminal f, so that what is typed is
// not shown, and returns the function that turns it back on.
func noEcho(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return nil, fmt.Errorf("cannot turn off the terminal's echo: %v", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ECHONL // whole lines; the newline still shows
	if err := unix.IoctlSetTermios(fd, ioctlWriteTermios, &quiet); err != nil {
		return nil, fmt.Errorf("cannot turn off the terminal's echo: %v", err)
	}
	return func() { unix.IoctlSetTermios(fd, ioctlWriteTermios, old) }, nil
}

//go:build linux || darwin

package main

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// noEcho turns off the echo of the terminal f, so that what is typed is
// not shown, and returns the function that turns it back on.
func noEcho(f *os.File) (restore func(), err error) {
	var old syscall.Termios
	if err := termios(f, ioctlGetTermios, &old); err != nil {
		return nil, err
	}
	quiet := old
	quiet.Lflag &^= syscall.ECHO
	quiet.Lflag |= syscall.ICANON | syscall.ECHONL // whole lines; the newline still shows
	if err := termios(f, ioctlSetTermios, &quiet); err != nil {
		return nil, err
	}
	return func() { termios(f, ioctlSetTermios, &old) }, nil
}

func termios(f *os.File, req uintptr, t *syscall.Termios) error {
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(unsafe.Pointer(t)))
	if errno != 0 {
		return errors.New("cannot turn off the terminal's echo: " + errno.Error())
	}
	return nil
}

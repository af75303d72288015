//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isConsole reports whether f is a terminal: it answers the terminal
// attributes request (isatty(3)).
func isConsole(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// enableEscapes reports true: Unix terminals show escape sequences.
func enableEscapes(*os.File) bool { return true }

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isConsole reports whether f is a console: it has a console mode. NUL,
// a character device too, has none.
func isConsole(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// enableEscapes turns on virtual terminal processing for the console f,
// so that it shows ANSI escape sequences (Windows 10 and later), and
// reports whether it is on.
func enableEscapes(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return false
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}

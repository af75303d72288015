package main

import (
	"os"
	"syscall"
)

// stopSignals are the console events that end a command cleanly, as Go
// delivers them on Windows: Ctrl-C and Ctrl-Break as os.Interrupt; closing
// the console window, logging off and shutting down as SIGTERM. Windows
// ends the process a few seconds after a console closes (about 5), whether
// or not it has finished; its stdio servers end with it, through their
// kill-on-close Job Objects.
func stopSignals(func(os.Signal) bool) []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM}
}

//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals are the signals that end a command cleanly: SIGINT (Ctrl-C),
// SIGTERM, and SIGHUP, sent when the terminal closes, unless it was ignored
// when switchboard started (nohup): asking for a signal undoes its being
// ignored, so it is asked for only when ignored says it is not.
func stopSignals(ignored func(os.Signal) bool) []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

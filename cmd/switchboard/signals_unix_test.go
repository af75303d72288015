//go:build unix

package main

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

func TestStopSignals(t *testing.T) {
	all := stopSignals(func(os.Signal) bool { return false })
	if want := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}; !slices.Equal(all, want) {
		t.Errorf("stopSignals = %v, want %v", all, want)
	}
	nohup := stopSignals(func(s os.Signal) bool { return s == syscall.SIGHUP })
	if slices.Contains(nohup, os.Signal(syscall.SIGHUP)) {
		t.Errorf("stopSignals under nohup = %v: SIGHUP was ignored and must stay so", nohup)
	}
}

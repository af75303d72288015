package main

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal (ptyPair),
// or skips the test where there are none.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	_, pts := ptyPair(t)
	return pts
}

// TestIsTerminalPTY: the terminal side of a pseudo-terminal is a terminal.
func TestIsTerminalPTY(t *testing.T) {
	pts := openPTY(t)
	if !isTerminal(pts) {
		t.Errorf("%s is not taken for a terminal", pts.Name())
	}
}

// TestNoEchoPTY: noEcho turns the echo of a terminal off, whole lines
// still read and their newline still shown, and its restore turns it back
// on; a file that is not a terminal is refused.
func TestNoEchoPTY(t *testing.T) {
	pts := openPTY(t)
	lflag := func() uint32 {
		tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag
	}
	if lflag()&unix.ECHO == 0 {
		t.Fatal("a new terminal does not echo")
	}
	restore, err := noEcho(pts)
	if err != nil {
		t.Fatal(err)
	}
	if l := lflag(); l&unix.ECHO != 0 || l&unix.ICANON == 0 || l&unix.ECHONL == 0 {
		t.Errorf("with noEcho: lflag %#x, want ECHO off, ICANON and ECHONL on", l)
	}
	restore()
	if lflag()&unix.ECHO == 0 {
		t.Error("the echo is still off after restore")
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := noEcho(f); err == nil || !strings.HasPrefix(err.Error(), "cannot turn off the terminal's echo: ") {
		t.Errorf("noEcho(%s) = %v, want it refused", os.DevNull, err)
	}
}

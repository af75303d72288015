package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal, or skips the
// test where there are none.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
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

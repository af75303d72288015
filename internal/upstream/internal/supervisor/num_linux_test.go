package supervisor

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNumbers checks the stand-ins for strconv and strings against them.
func TestNumbers(t *testing.T) {
	for _, n := range []uint64{0, 7, 10, 4194304, 1<<63 - 1} {
		if got, want := itoa(n), strconv.FormatUint(n, 10); got != want {
			t.Errorf("itoa(%d) = %q, want %q", n, got, want)
		}
	}
	for _, s := range []string{"0", "42", "123456789012345678", "", "-1", "1a", " 1", "1234567890123456789"} {
		got, ok := parseUint(s)
		want, err := strconv.ParseUint(s, 10, 64)
		wantOK := err == nil && len(s) <= 18
		if ok != wantOK || (ok && got != want) {
			t.Errorf("parseUint(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	}
	for _, s := range []string{"", " ", "a", " a  b\nc ", "S 1 2 3\n"} {
		got, want := fields(s), strings.Fields(s)
		if len(got) != 0 || len(want) != 0 {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields(%q) (-want +got):\n%s", s, diff)
			}
		}
	}
}

// TestReadStat reads this process's own stat line.
func TestReadStat(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || st.Zombie || st.Start == 0 {
		t.Errorf("ReadStat(self) = %+v, want ppid %d, living, a start time", st, os.Getppid())
	}
	if _, err := ReadStat(-1); err == nil {
		t.Error("ReadStat(-1) succeeded")
	}
}

func TestReadOnlySpan(t *testing.T) {
	for _, c := range []struct {
		line       string
		start, end uintptr
		ok         bool
	}{
		{"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/sb", 0x400000, 0x452000, true},
		{"00652000-00653000 r--p 00052000 08:02 173521      /usr/bin/sb", 0x652000, 0x653000, true},
		{"00653000-00654000 rw-p 00053000 08:02 173521      /usr/bin/sb", 0, 0, false},
		{"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/other", 0, 0, false},
		{"00400000-00452000 r-xs 00000000 08:02 173521      /usr/bin/sb", 0, 0, false},
		{"7ffd-7ffe r--p 00000000 00:00 0                   [vvar]", 0, 0, false},
		{"garbage", 0, 0, false},
	} {
		s, e, ok := readOnlySpan([]byte(c.line), "/usr/bin/sb")
		if s != c.start || e != c.end || ok != c.ok {
			t.Errorf("readOnlySpan(%q) = %x, %x, %v; want %x, %x, %v", c.line, s, e, ok, c.start, c.end, c.ok)
		}
	}
}

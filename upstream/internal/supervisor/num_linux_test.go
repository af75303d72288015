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

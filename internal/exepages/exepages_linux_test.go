package exepages

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadOnlyMappings(t *testing.T) {
	const maps = `00400000-01137000 r-xp 00000000 fe:00 10027120                           /usr/bin/switch board
01137000-01fac000 r--p 00d37000 fe:00 10027120                           /usr/bin/switch board
01fac000-0209a000 rw-p 01bac000 fe:00 10027120                           /usr/bin/switch board
0209a000-040e9000 rw-p 00000000 00:00 0 
040e9000-040ea000 r--s 00000000 fe:00 10027120                           /usr/bin/switch board
7f5724ee0000-7f5725036000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f5725036000-7f5725037000 r--p 00026000 fe:00 326269                     /usr/bin/switch board (deleted)
7ffd2c1f2000-7ffd2c213000 rw-p 00000000 00:00 0                          [stack]
`
	got, err := readOnlyMappings(strings.NewReader(maps), "/usr/bin/switch board")
	if err != nil {
		t.Fatal(err)
	}
	want := []span{{0x400000, 0x1137000}, {0x1137000, 0x1fac000}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(span{})); diff != "" {
		t.Errorf("readOnlyMappings (-want +got):\n%s", diff)
	}
	if _, err := readOnlyMappings(strings.NewReader("zz-01 r-xp 0 fe:00 1 /x\n"), "/x"); err == nil {
		t.Error("a malformed address: got no error")
	}
}

// TestRelease maps every page of the test binary's read-only mappings (by
// reading them through /proc/self/mem, which faults them in), releases
// them, and checks that most are gone from the process's resident set.
func TestRelease(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	spans, err := readOnlyMappings(f, exe)
	f.Close()
	if err != nil || len(spans) == 0 {
		t.Fatalf("readOnlyMappings of %s: %v, %v", exe, spans, err)
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	var size int64
	buf := make([]byte, 1<<16)
	for _, s := range spans {
		for off := s.start; off < s.end; off += uintptr(len(buf)) {
			if _, err := mem.ReadAt(buf[:min(uintptr(len(buf)), s.end-off)], int64(off)); err != nil {
				t.Fatalf("reading %#x: %v", off, err)
			}
		}
		size += int64(s.end - s.start)
	}
	before, _, err := Resident(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	n, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after, mapped, err := Resident(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if mapped != size {
		t.Errorf("Resident counts mappings of %d bytes, want the %d of the read-only mappings", mapped, size)
	}
	if n != size {
		t.Errorf("Release released %d bytes, want the %d of the read-only mappings", n, size)
	}
	t.Logf("resident read-only pages of the executable: %d kB before, %d kB after (mappings of %d kB)", before>>10, after>>10, size>>10)
	if before < size*9/10 {
		t.Fatalf("only %d of %d bytes resident after reading them all: the test cannot tell", before, size)
	}
	if after > before/2 {
		t.Errorf("%d bytes resident after Release, want at most half the %d before", after, before)
	}
}

func TestSmapsResident(t *testing.T) {
	const smaps = `00400000-01137000 r-xp 00000000 fe:00 10027120                           /bin/sb
Size:              13532 kB
Rss:               11480 kB
VmFlags: rd ex mr mw me dw sd
01fac000-0209a000 rw-p 01bac000 fe:00 10027120                           /bin/sb
Size:                952 kB
Rss:                 696 kB
01137000-01fac000 r--p 00d37000 fe:00 10027120                           /bin/sb
Size:              14804 kB
Rss:                9876 kB
7f5724ee0000-7f5725036000 r-xp 00026000 fe:00 326269                     /lib/libc.so.6
Size:               1368 kB
Rss:                 896 kB
`
	resident, size, err := smapsResident(strings.NewReader(smaps), "/bin/sb")
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(11480+9876) << 10; resident != want {
		t.Errorf("resident = %d, want %d", resident, want)
	}
	if want := int64(13532+14804) << 10; size != want {
		t.Errorf("size = %d, want %d", size, want)
	}
}

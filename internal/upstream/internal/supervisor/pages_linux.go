//go:build linux

package supervisor

import (
	"os"
	"syscall"
)

// releasePages gives back the supervisor's resident pages of its
// executable's read-only mappings (code, read-only data, the function
// tables), as internal/exepages.Release does for serve, without the
// packages this one may not import: the supervisor only waits from here on,
// and needs few of them again. A private page written to is never touched.
// It is worth no error: it only saves memory.
func releasePages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for len(maps) > 0 {
		line := maps
		for i := 0; i < len(maps); i++ {
			if maps[i] == '\n' {
				line, maps = maps[:i], maps[i+1:]
				break
			}
			if i == len(maps)-1 {
				maps = nil
			}
		}
		start, end, ok := readOnlySpan(line, exe)
		if ok {
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED)
		}
	}
}

// readOnlySpan reads a line of /proc/self/maps ("start-end perms offset
// dev inode path") and returns its span when it maps path read-only and
// private.
func readOnlySpan(line []byte, path string) (start, end uintptr, ok bool) {
	var fields [6][]byte
	n, i := 0, 0
	for n < 6 && i < len(line) {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		j := i
		if n == 5 {
			j = len(line) // the path may hold spaces
		} else {
			for j < len(line) && line[j] != ' ' {
				j++
			}
		}
		if j > i {
			fields[n] = line[i:j]
			n++
		}
		i = j
	}
	perms := fields[1]
	if n != 6 || string(fields[5]) != path || len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
		return 0, 0, false
	}
	lo, hi, cut := fields[0], []byte(nil), false
	for k := range lo {
		if lo[k] == '-' {
			lo, hi, cut = fields[0][:k], fields[0][k+1:], true
			break
		}
	}
	s, ok1 := parseHex(lo)
	e, ok2 := parseHex(hi)
	if !cut || !ok1 || !ok2 || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

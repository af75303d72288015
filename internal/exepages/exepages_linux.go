package exepages

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func release() (int64, error) {
	// The name the kernel gives the executable in /proc/self/maps, with
	// " (deleted)" appended when it was replaced since: /proc/self/exe
	// reads the same way.
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: %w", err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: %w", err)
	}
	spans, err := readOnlyMappings(f, exe)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("releasing the executable's pages: reading /proc/self/maps: %w", err)
	}
	var n int64
	for _, s := range spans {
		// MADV_DONTNEED on a private file mapping drops the process's
		// page table entries; a later access maps the file's page again.
		// The mapping is read-only, so no page of it holds data of the
		// process's own.
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, syscall.MADV_DONTNEED); e != 0 {
			return n, fmt.Errorf("releasing the executable's pages: madvise %#x-%#x: %w", s.start, s.end, e)
		}
		n += int64(s.end - s.start)
	}
	return n, nil
}

// A span is a mapping's address range, [start, end).
type span struct{ start, end uintptr }

// readOnlyMappings returns the mappings of path in maps (the format of
// /proc/PID/maps) that can be neither written nor shared.
func readOnlyMappings(maps io.Reader, path string) ([]span, error) {
	var spans []span
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// address perms offset dev inode pathname; the pathname, which
		// may hold spaces, is the rest of the line.
		fields := strings.SplitN(sc.Text(), " ", 6)
		if len(fields) < 6 || strings.TrimLeft(fields[5], " ") != path {
			continue
		}
		perms := fields[1]
		if len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("unexpected line %q", sc.Text())
		}
		spans = append(spans, span{uintptr(start), uintptr(end)})
	}
	return spans, sc.Err()
}

func residentOf(pid int) (resident, size int64, err error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("resident pages of process %d's executable: %w", pid, err)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("resident pages of process %d's executable: %w", pid, err)
	}
	resident, size, err = smapsResident(strings.NewReader(string(data)), exe)
	if err != nil {
		return 0, 0, fmt.Errorf("resident pages of process %d's executable: /proc/%d/smaps: %w", pid, pid, err)
	}
	return resident, size, nil
}

// smapsResident sums the Rss and the Size of the mappings of path in
// smaps (the format of /proc/PID/smaps) that readOnlyMappings would
// release, in bytes.
func smapsResident(smaps io.Reader, path string) (resident, size int64, err error) {
	in := false
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		if isMapping(line) {
			spans, err := readOnlyMappings(strings.NewReader(line), path)
			if err != nil {
				return 0, 0, err
			}
			in = len(spans) == 1
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !in || !ok || (key != "Rss" && key != "Size") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("unexpected line %q", line)
		}
		if key == "Rss" {
			resident += kb << 10
		} else {
			size += kb << 10
		}
	}
	return resident, size, sc.Err()
}

// isMapping reports whether a line of smaps begins a mapping (its address
// range) rather than giving one of its figures ("Rss:    12 kB").
func isMapping(line string) bool {
	addr, _, _ := strings.Cut(line, " ")
	return strings.Contains(addr, "-") && !strings.HasSuffix(addr, ":")
}

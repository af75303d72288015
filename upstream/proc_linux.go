package upstream

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// A procStat is what /proc/<pid>/stat says of a process that matters here.
type procStat struct {
	ppid, pgrp int
	start      uint64 // start time in clock ticks after boot: with the pid, it names one process
	zombie     bool
}

// readStat reads /proc/<pid>/stat (see proc(5)): "pid (comm) state ppid
// pgrp … starttime …", where comm may hold spaces and parentheses and
// starttime is field 22.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parsing /proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(data[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parsing /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	var st procStat
	st.zombie = string(f[0]) == "Z"
	st.ppid, err = strconv.Atoi(string(f[1]))
	if err == nil {
		st.pgrp, err = strconv.Atoi(string(f[2]))
	}
	if err == nil {
		st.start, err = strconv.ParseUint(string(f[19]), 10, 64)
	}
	if err != nil {
		return procStat{}, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// A proc is a living process.
type proc struct {
	pid int
	procStat
}

// descendants returns the living descendants of pid, read from /proc.
// Processes that come and go while it reads may be missed.
func descendants(pid int) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(p); err == nil && !st.zombie {
			children[st.ppid] = append(children[st.ppid], proc{p, st})
		}
	}
	var out []proc
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p.pid]...)
	}
	return out
}

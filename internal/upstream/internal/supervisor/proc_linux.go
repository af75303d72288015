package supervisor

import (
	"errors"
	"os"
)

// A ProcStat is what /proc/<pid>/stat says of a process that matters here.
type ProcStat struct {
	PPID, Pgrp int
	Start      uint64 // start time in clock ticks after boot: with the pid, it names one process
	Zombie     bool
}

// ReadStat reads /proc/<pid>/stat (see proc(5)): "pid (comm) state ppid
// pgrp … starttime …", where comm may hold spaces and parentheses and
// starttime is field 22.
func ReadStat(pid int) (ProcStat, error) {
	name := "/proc/" + itoa(uint64(pid)) + "/stat"
	data, err := os.ReadFile(name)
	if err != nil {
		return ProcStat{}, err
	}
	s := string(data)
	i := len(s) - 1
	for i >= 0 && s[i] != ')' {
		i--
	}
	if i < 0 {
		return ProcStat{}, errors.New("parsing " + name + ": no command name")
	}
	f := fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return ProcStat{}, errors.New("parsing " + name + ": " + itoa(uint64(len(f)+2)) + " fields")
	}
	var st ProcStat
	var ok1, ok2, ok3 bool
	st.Zombie = f[0] == "Z"
	st.PPID, ok1 = atoi(f[1])
	st.Pgrp, ok2 = atoi(f[2])
	st.Start, ok3 = parseUint(f[19])
	if !ok1 || !ok2 || !ok3 {
		return ProcStat{}, errors.New("parsing " + name + ": a field is not a number")
	}
	return st, nil
}

// A Proc is a living process.
type Proc struct {
	PID int
	ProcStat
}

// Descendants returns the living descendants of pid, read from /proc.
// Processes that come and go while it reads may be missed.
func Descendants(pid int) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]Proc{}
	for _, e := range ents {
		p, ok := atoi(e.Name())
		if !ok {
			continue
		}
		if st, err := ReadStat(p); err == nil && !st.Zombie {
			children[st.PPID] = append(children[st.PPID], Proc{p, st})
		}
	}
	var out []Proc
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p.PID]...)
	}
	return out
}

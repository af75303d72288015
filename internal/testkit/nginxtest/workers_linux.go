package nginxtest

import (
	"bytes"
	"os"
	"strconv"
)

// workers returns the pids of the children of nginx's master, from /proc.
func workers(master int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) > 1 && string(f[0]) != "Z" {
			if ppid, _ := strconv.Atoi(string(f[1])); ppid == master {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

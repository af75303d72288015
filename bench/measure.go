package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func numCPU() int { return runtime.NumCPU() }

// warm holds each subject's figures with the upstream already running.
type warm struct {
	p50, p99 []time.Duration // one client at a time
	perSec   []float64       // at o.clients clients
	cpu      []time.Duration // CPU of the serving process per call, at o.clients clients
	kidsCPU  []time.Duration // CPU of its descendants (the upstream server) per call, likewise
	idleKB   []int           // RSS after start-up, before any session
	peakKB   []int           // peak RSS (VmHWM) after the load
	idleAnon []int           // RssAnon idle: the heap and stacks, not the binary's pages
	anonKB   []int           // RssAnon at the end of the load
	fileKB   []int           // RssFile at the end of the load: the binary's and libraries' pages
	kidsKB   []int           // RSS of the subject's descendants at the end of the load
}

// measureWarm starts the subjects, then measures latency one call at a
// time and throughput at o.clients clients, in bursts taken in turn so
// that a slow spell of the machine falls on every subject alike.
func measureWarm(ctx context.Context, o options, u upstream, subjects []*subject) (*warm, error) {
	n := len(subjects)
	w := &warm{p50: make([]time.Duration, n), p99: make([]time.Duration, n), perSec: make([]float64, n),
		cpu: make([]time.Duration, n), kidsCPU: make([]time.Duration, n), idleKB: make([]int, n), peakKB: make([]int, n),
		idleAnon: make([]int, n), anonKB: make([]int, n), fileKB: make([]int, n), kidsKB: make([]int, n)}
	runs := make([]*running, n)
	defer func() {
		for _, r := range runs {
			if r != nil {
				r.stop()
			}
		}
	}()
	for i, s := range subjects {
		if s.start == nil {
			continue
		}
		r, err := s.start()
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", s.name, err)
		}
		runs[i] = r
	}
	// Idle means settled after start-up (mcp-proxy connects its server at
	// start, switchboard when first asked): this waits on purpose.
	time.Sleep(time.Second)
	for i, r := range runs {
		if r != nil {
			w.idleKB[i] = rssKB(r.cmd.Process.Pid, "VmRSS")
			w.idleAnon[i] = rssKB(r.cmd.Process.Pid, "RssAnon")
		}
	}
	one := make([][]*mcp.ClientSession, n)
	for i, s := range subjects {
		cs, err := connect(ctx, runs[i], u)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", s.name, err)
		}
		defer cs.Close()
		one[i] = []*mcp.ClientSession{cs}
		if err := warmUp(ctx, cs, s, 100); err != nil {
			return nil, err
		}
	}
	fmt.Fprintln(os.Stderr, "bench: latency, one client")
	lat, _, _, _, err := interleave(ctx, subjects, runs, one, o.calls, 50)
	if err != nil {
		return nil, err
	}
	for i := range subjects {
		w.p50[i], w.p99[i] = pct(lat[i], 0.5), pct(lat[i], 0.99)
	}
	many := make([][]*mcp.ClientSession, n)
	for i, s := range subjects {
		many[i] = []*mcp.ClientSession{one[i][0]}
		for len(many[i]) < o.clients {
			cs := one[i][0] // a stdio server has one client: direct clients share it
			if runs[i] != nil {
				if cs, err = connect(ctx, runs[i], u); err != nil {
					return nil, fmt.Errorf("connecting to %s: %w", s.name, err)
				}
				defer cs.Close()
				if err := warmUp(ctx, cs, s, 5); err != nil {
					return nil, err
				}
			}
			many[i] = append(many[i], cs)
		}
	}
	fmt.Fprintf(os.Stderr, "bench: throughput, %d clients\n", o.clients)
	_, took, cpu, kidsCPU, err := interleave(ctx, subjects, runs, many, o.load, max(1000, 20*o.clients))
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		w.perSec[i] = float64(o.load) / took[i].Seconds()
		w.cpu[i] = cpu[i] / time.Duration(o.load)
		w.kidsCPU[i] = kidsCPU[i] / time.Duration(o.load)
		if r != nil {
			w.peakKB[i] = rssKB(r.cmd.Process.Pid, "VmHWM")
			w.anonKB[i] = rssKB(r.cmd.Process.Pid, "RssAnon")
			w.fileKB[i] = rssKB(r.cmd.Process.Pid, "RssFile")
			w.kidsKB[i] = descendantsKB(r.cmd.Process.Pid)
		}
	}
	return w, nil
}

// measureIdle starts the subjects that serve and reads their RSS one
// second after start-up, before any client, as measureWarm does.
func measureIdle(subjects []*subject) ([]int, error) {
	idleKB := make([]int, len(subjects))
	for i, s := range subjects {
		if s.start == nil {
			continue
		}
		r, err := s.start()
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", s.name, err)
		}
		time.Sleep(time.Second) // settled after start-up: this waits on purpose
		idleKB[i] = rssKB(r.cmd.Process.Pid, "VmRSS")
		r.stop()
	}
	return idleKB, nil
}

func warmUp(ctx context.Context, cs *mcp.ClientSession, s *subject, calls int) error {
	for i := range calls {
		if err := call(ctx, cs, s, i); err != nil {
			return err
		}
	}
	return nil
}

// interleave makes total calls through each subject's sessions (one
// goroutine each), in bursts of burst calls taken in turn, rotating who goes
// first. It returns each subject's latencies, time taken, and CPU used by
// its serving process and by that process's descendants (the upstream
// server, and switchboard's supervisor).
func interleave(ctx context.Context, subjects []*subject, runs []*running, sessions [][]*mcp.ClientSession, total, burst int) (lat [][]time.Duration, took, cpu, kidsCPU []time.Duration, err error) {
	n := len(subjects)
	lat = make([][]time.Duration, n)
	took = make([]time.Duration, n)
	cpu = make([]time.Duration, n)
	kidsCPU = make([]time.Duration, n)
	for done := 0; done < total; done += burst {
		calls := min(burst, total-done)
		for k := range n {
			i := (k + done/burst) % n
			var c0, k0 time.Duration
			var kids []int
			if runs[i] != nil {
				kids = descendants(runs[i].cmd.Process.Pid)
				c0, k0 = cpuTime(runs[i].cmd.Process.Pid), cpuTimes(kids)
			}
			l, d, err := burstCalls(ctx, subjects[i], sessions[i], calls)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			if runs[i] != nil {
				cpu[i] += cpuTime(runs[i].cmd.Process.Pid) - c0
				kidsCPU[i] += cpuTimes(kids) - k0
			}
			lat[i], took[i] = append(lat[i], l...), took[i]+d
		}
	}
	return lat, took, cpu, kidsCPU, nil
}

// cpuTimes sums the CPU time of the processes pids.
func cpuTimes(pids []int) time.Duration {
	var t time.Duration
	for _, pid := range pids {
		t += cpuTime(pid)
	}
	return t
}

// burstCalls makes calls calls spread over the sessions, one goroutine per
// session.
func burstCalls(ctx context.Context, s *subject, sessions []*mcp.ClientSession, calls int) ([]time.Duration, time.Duration, error) {
	lat := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	t0 := time.Now()
	for c, cs := range sessions {
		k := calls / len(sessions)
		if c < calls%len(sessions) {
			k++
		}
		wg.Go(func() {
			for i := range k {
				t := time.Now()
				if errs[c] = call(ctx, cs, s, i); errs[c] != nil {
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	d := time.Since(t0)
	return slices.Concat(lat...), d, errors.Join(errs...)
}

func pct(l []time.Duration, p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// cpuTime returns the CPU time a process has used, from /proc/PID/stat
// (clock ticks of 10 ms: measure many calls); 0 where there is no /proc.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// coldResult is one upstream's cold calls: a bare go-sdk client's and the
// switchboard CLI's, each from spawn to exit.
type coldResult struct {
	upstream            string
	bare, board, before time.Duration // medians; before is 0 without -before
}

// measureCold runs o.cold cold calls per upstream and side, alternating:
// the bare go-sdk client (this binary in cold mode), `switchboard call`
// and, if old is set, the same call of the switchboard built from
// -before. Each is timed from spawn to exit; its output must be the echo.
func measureCold(ctx context.Context, o options, sb, old, dir string, ups []upstream) ([]coldResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []coldResult
	for _, u := range ups {
		fmt.Fprintf(os.Stderr, "bench: cold calls, %s upstream\n", u.name)
		config, err := switchboardConfig(dir, "cold", u, "server")
		if err != nil {
			return nil, err
		}
		args := fmt.Sprintf(`{%q:"hi"}`, u.argName)
		bare := func() *exec.Cmd {
			cmd := exec.CommandContext(ctx, exe)
			cmd.Env = append(envWithout(relayEnv), coldEnv+"=1", relayUpstreamEnv+"="+u.name)
			return cmd
		}
		board := func() *exec.Cmd {
			return switchboardCmd(sb, config, "call", u.tool, "--server", "f0", "--args", args)
		}
		before := func() *exec.Cmd {
			return switchboardCmd(old, config, "call", u.tool, "--server", "f0", "--args", args)
		}
		type side struct {
			cmd func() *exec.Cmd
			lat *[]time.Duration
		}
		var tb, ts, to []time.Duration
		sides := []side{{bare, &tb}, {board, &ts}}
		if old != "" {
			sides = append(sides, side{before, &to})
		}
		for i := range o.cold + 1 { // the first of each is a warm-up (page cache, catalog)
			for _, side := range sides {
				d, err := timeRun(side.cmd())
				if err != nil {
					return nil, err
				}
				if i > 0 {
					*side.lat = append(*side.lat, d)
				}
			}
		}
		r := coldResult{upstream: u.name, bare: pct(tb, 0.5), board: pct(ts, 0.5)}
		if old != "" {
			r.before = pct(to, 0.5)
		}
		out = append(out, r)
	}
	return out, nil
}

// timeRun runs cmd to its end and checks that it printed the echo.
func timeRun(cmd *exec.Cmd) (time.Duration, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	if !strings.Contains(string(out), "hi") {
		return 0, fmt.Errorf("%s printed %q, not the echo", strings.Join(cmd.Args, " "), out)
	}
	return d, nil
}

// Command bench measures Switchboard against the same upstream called
// directly, a bare go-sdk relay, and TBXark/mcp-proxy (the fastest Go
// gateway we know of), in one run on one machine, and prints a table of
// medians and ratios. Every subject is a real process; the upstream is the
// fixture server of the project's tests (a go-sdk server over stdio), and
// the cold call also runs against @modelcontextprotocol/server-everything
// when $MCP_PEERS_DIR holds the npm peers.
//
//	cd bench && go run .              # ~3 minutes on a 2-core machine
//	cd bench && go run . -calls 500 -load 2000 -cold 5   # quicker, noisier
//
// It lives in a module of its own so that the product's go.mod does not
// carry the peer. See docs/bench.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// A try is an extra column: switchboard in a mode ("transparent" or
// "mcp") with env added to its environment.
type try struct {
	mode string
	env  []string
}

type options struct {
	calls    int // calls per subject, one client at a time
	clients  int // concurrent HTTP clients for throughput
	load     int // calls per subject at `clients` clients
	cold     int // cold calls per upstream and side
	peer     bool
	sbEnv    []string // added to the environment of switchboard serve
	only     []string // subjects to measure besides direct; nil: all
	try      []try    // extra columns: a mode with an environment of its own
	before   string   // another checkout of the product, measured too
	coldOnly bool     // only idle RSS and the cold call
	startup  bool     // only the start-up of processes that do nothing
}

func main() {
	testserver.Main() // the fixture upstream
	modeMain()        // the relay or the bare cold client
	asReleased()      // from here on, this binary is built as releases are
	var o options
	flag.IntVar(&o.calls, "calls", 2000, "calls per subject for latency, one client at a time")
	flag.IntVar(&o.clients, "clients", 50, "concurrent HTTP clients for throughput and memory")
	flag.IntVar(&o.load, "load", 6000, "calls per subject at -clients clients")
	flag.IntVar(&o.cold, "cold", 10, "cold CLI calls per upstream, each side")
	flag.BoolVar(&o.peer, "peer", true, "build and measure TBXark/mcp-proxy")
	flag.StringVar(&sbUpstreamProtocol, "sb-upstream-protocol", "", "the protocol `revision` switchboard speaks to the upstream (default: its own, 2025-11-25 over stdio; mcp-proxy speaks 2025-06-18, the relay 2026-07-28)")
	flag.BoolVar(&o.coldOnly, "cold-only", false, "measure only the idle RSS (switchboard, relay) and the cold call, no latency or load")
	flag.Func("sb-env", "`KEY=VALUE` added to switchboard serve's environment (repeatable), to try a tunable such as GOMEMLIMIT", func(kv string) error {
		if !strings.Contains(kv, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", kv)
		}
		o.sbEnv = append(o.sbEnv, kv)
		return nil
	})
	flag.Func("only", "measure only these `SUBJECTS` (comma-separated: sb-transparent, sb-stateless, sb-mcp, sb-direct, relay, mcp-proxy) besides direct", func(v string) error {
		o.only = strings.Split(v, ",")
		return nil
	})
	flag.Func("try", "add a column: sb-transparent with `[mcp:]KEY=VALUE[,KEY=VALUE]` added to its environment (repeatable), to compare tunables in one run; with mcp:, the mcp tool (sb-mcp) instead", func(v string) error {
		t := try{mode: "transparent"}
		if rest, ok := strings.CutPrefix(v, "mcp:"); ok {
			t.mode, v = "mcp", rest
		}
		t.env = strings.Split(v, ",")
		for _, kv := range t.env {
			if !strings.Contains(kv, "=") {
				return fmt.Errorf("want KEY=VALUE, got %q", kv)
			}
		}
		o.try = append(o.try, t)
		return nil
	})
	flag.BoolVar(&o.startup, "startup", false, "measure only how long a process that does nothing takes to start and exit, by what it links (10 × -cold runs each), switchboard last")
	flag.StringVar(&o.before, "before", "", "also measure switchboard as built from `DIR`, another checkout of the product (a git worktree of main, say), in transparent mode (column before-transparent) and in the cold call (column before)")
	flag.Parse()
	for _, name := range o.only {
		if !slices.Contains([]string{"sb-transparent", "sb-stateless", "sb-mcp", "sb-direct", "relay", "mcp-proxy"}, name) {
			fmt.Fprintf(os.Stderr, "bench: -only: unknown subject %q\n", name)
			os.Exit(2)
		}
	}
	if o.only != nil && !slices.Contains(o.only, "mcp-proxy") {
		o.peer = false // not measured: not built
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "switchboard-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root, err := productRoot()
	if err != nil {
		return err
	}
	// The product is built in its own module, with its own build list.
	sb, err := build(dir, "switchboard", "./cmd/switchboard", root)
	if err != nil {
		return err
	}
	if o.startup {
		runs := max(10*o.cold, 1)
		var peer string
		if o.peer {
			if peer, err = build(dir, "mcp-proxy", "github.com/TBXark/mcp-proxy", ""); err != nil {
				fmt.Fprintf(os.Stderr, "bench: TBXark/mcp-proxy left out: %v\n", err)
				peer = ""
			}
		}
		rows, err := measureStartup(dir, sb, peer, runs)
		if err != nil {
			return err
		}
		printStartup(os.Stdout, rows, runs)
		return nil
	}
	var peer string
	if o.peer && !o.coldOnly {
		if peer, err = build(dir, "mcp-proxy", "github.com/TBXark/mcp-proxy", ""); err != nil {
			fmt.Fprintf(os.Stderr, "bench: TBXark/mcp-proxy left out: %v\n", err)
			peer = ""
		}
	}
	u := goUpstream()
	subjects := []*subject{
		{name: "direct", tool: u.tool, args: argsFor(u, false)},
		{name: "sb-transparent", tool: u.tool, args: argsFor(u, false), start: startSwitchboard(sb, dir, "transparent", u, "none", o.sbEnv)},
		{name: "sb-stateless", tool: u.tool, args: argsFor(u, false), start: startSwitchboard(sb, dir, "stateless", u, "none", o.sbEnv, "--stateless")},
		{name: "sb-mcp", tool: "mcp", args: argsFor(u, true), start: startSwitchboard(sb, dir, "mcp", u, "server", o.sbEnv)},
		{name: "sb-direct", tool: "f0_" + u.tool, args: argsFor(u, false), start: startSwitchboard(sb, dir, "direct", u, "server", o.sbEnv)},
		{name: "relay", tool: u.tool, args: argsFor(u, false), start: startRelay(u)},
	}
	if peer != "" {
		subjects = append(subjects, &subject{name: "mcp-proxy", tool: u.tool, args: argsFor(u, false), start: startPeer(peer, dir, u)})
	}
	var old string // switchboard as built from o.before
	if o.before != "" {
		old, err = build(dir, "switchboard-before", "./cmd/switchboard", o.before)
		if err != nil {
			return err
		}
		subjects = append(subjects, &subject{name: "before-transparent", tool: u.tool, args: argsFor(u, false),
			start: startSwitchboard(old, dir, "before", u, "none", o.sbEnv)})
	}
	for i, t := range o.try {
		env := append(slices.Clip(o.sbEnv), t.env...)
		label := fmt.Sprintf("try%d", i)
		if t.mode == "mcp" {
			subjects = append(subjects, &subject{name: "sb-mcp+" + strings.Join(t.env, ","), tool: "mcp", args: argsFor(u, true),
				start: startSwitchboard(sb, dir, label, u, "server", env)})
			continue
		}
		subjects = append(subjects, &subject{name: "sb+" + strings.Join(t.env, ","), tool: u.tool, args: argsFor(u, false),
			start: startSwitchboard(sb, dir, label, u, "none", env)})
	}
	if o.only != nil {
		subjects = slices.DeleteFunc(subjects, func(s *subject) bool {
			return s.name != "direct" && s.name != "before-transparent" && !strings.HasPrefix(s.name, "sb+") && !strings.HasPrefix(s.name, "sb-mcp+") && !slices.Contains(o.only, s.name)
		})
	}
	fmt.Fprintf(os.Stderr, "bench: %s, %d cores; latency %d calls, load %d calls at %d clients, %d cold calls\n",
		time.Now().UTC().Format(time.RFC3339), numCPU(), o.calls, o.load, o.clients, o.cold)
	if o.coldOnly {
		idle, err := measureIdle(subjects)
		if err != nil {
			return err
		}
		printIdle(os.Stdout, subjects, idle)
	} else {
		w, err := measureWarm(ctx, o, u, subjects)
		if err != nil {
			return err
		}
		printWarm(os.Stdout, subjects, w, o)
	}
	if o.cold == 0 {
		return nil
	}
	ups := []upstream{u}
	if n, ok := nodeUpstream(); ok {
		ups = append(ups, n)
	} else {
		fmt.Fprintln(os.Stderr, "bench: no node upstream for the cold call (set MCP_PEERS_DIR to the installed npm peers)")
	}
	cold, err := measureCold(ctx, o, sb, old, dir, ups)
	if err != nil {
		return err
	}
	printCold(os.Stdout, cold)
	return nil
}

// build builds a package into dir, in the module at moduleDir ("": the
// bench module, where the peer is a tool dependency).
func build(dir, name, pkg, moduleDir string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", append(append([]string{"build"}, releaseFlags...), "-o", bin, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// releaseFlags, with CGO_ENABLED=0, build every Go subject as
// scripts/release.sh builds switchboard: what users run. A default build
// (cgo on, so linked against libc, with a symbol table) starts slower and
// maps more; building them all alike keeps the ratios fair.
var releaseFlags = []string{"-trimpath", "-ldflags=-s -w"}

// releasedEnv marks the bench's own release build (asReleased).
const releasedEnv = "SWITCHBOARD_BENCH_RELEASED"

// asReleased rebuilds this program with releaseFlags and runs that build
// in its place, unless this is it: the bench binary is also the relay, the
// bare cold client and the Go upstream, which must be built as the
// gateways are. It returns only in the rebuilt program.
func asReleased() {
	if os.Getenv(releasedEnv) != "" {
		return
	}
	dir, err := os.MkdirTemp("", "switchboard-bench-self-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		self, err := build(dir, "bench", ".", "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: building itself (run it in bench/):", err)
			return 1
		}
		cmd := exec.Command(self, os.Args[1:]...)
		cmd.Env = append(os.Environ(), releasedEnv+"=1")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		// Ctrl-C reaches the child too (our process group): it stops and
		// cleans up, and this one waits for it to remove the build.
		signal.Ignore(os.Interrupt, syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		return 0
	}()
	os.Exit(code)
}

// productRoot is the directory of the product's module: the one the bench
// module replaces github.com/switchboard-mcp/switchboard with.
func productRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/switchboard-mcp/switchboard").Output()
	if err != nil {
		return "", fmt.Errorf("locating the product module (run the bench in bench/): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

package upstream_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestNpxRunsInstalledBin: a server configured as "npx -y
// @modelcontextprotocol/server-everything@<installed version>" in the
// project where that version is installed runs the package's bin under
// node, with no npm process in its tree; with SWITCHBOARD_NPX_RESOLVE=0
// in its env it runs npx as written. Both work.
func TestNpxRunsInstalledBin(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	peers := mcptest.Peers(t)
	pkg := filepath.Join(peers.Dir, "node_modules", "@modelcontextprotocol", "server-everything")
	var m struct{ Version string }
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Version == "" {
		t.Fatalf("reading server-everything's version: %v", err)
	}
	bin, err := filepath.EvalSymlinks(filepath.Join(pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	owner, _, _ := strings.Cut(peers.Everything().Env[0], "=")
	server := func(name string, env map[string]string) *config.Server {
		env[owner] = os.Getenv(owner)
		return &config.Server{Name: name, Type: config.TransportStdio, Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-everything@" + m.Version, "stdio"},
			Cwd:  peers.Dir, Env: env, RequestTimeout: 60 * time.Second, ProtocolVersion: "auto"}
	}
	h := newPool(t, []*config.Server{
		server("resolved", map[string]string{}),
		server("off", map[string]string{"SWITCHBOARD_NPX_RESOLVE": "0"}),
	}, nil)
	ctx := t.Context()
	for _, name := range []string{"resolved", "off"} {
		got, err := h.call(ctx, name, "echo", map[string]any{"message": "hi"})
		if err != nil || !strings.Contains(got, "hi") {
			t.Fatalf("%s: echo = %q, %v", name, got, err)
		}
	}

	pid := h.status("resolved").PID
	argv := cmdline(t, pid)
	if len(argv) != 3 || filepath.Base(argv[0]) != "node" || argv[1] != bin || argv[2] != "stdio" {
		t.Errorf("resolved: server runs %q, want [node %s stdio]", argv, bin)
	}
	for _, p := range group(t, pgid(t, pid)) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline") // empty if gone
		if a := strings.Split(string(b), "\x00"); isNpm(a) {
			t.Errorf("resolved: npm in the server's tree: %d %q", p, a)
		}
	}

	if a := cmdline(t, h.status("off").PID); !isNpm(a) {
		t.Errorf("off: server runs %q; SWITCHBOARD_NPX_RESOLVE=0 should run npx as written", a)
	}
}

// isNpm reports whether a command line is npm's or npx's: the program
// or script is npm or npx, or npm has set its title ("npm exec …").
func isNpm(argv []string) bool {
	for _, a := range argv[:min(len(argv), 3)] {
		switch filepath.Base(a) {
		case "npm", "npx", "npm-cli.js", "npx-cli.js":
			return true
		}
		if strings.HasPrefix(a, "npm ") {
			return true
		}
	}
	return false
}

// cmdline returns the arguments of process pid.
func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatalf("reading the command line of %d: %v", pid, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// pgid returns the process group of pid.
func pgid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	g, err := strconv.Atoi(f[2])
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// group returns the processes of process group g.
func group(t *testing.T, g int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(g) {
			pids = append(pids, pid)
		}
	}
	return pids
}

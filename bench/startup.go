package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// startupLayers are programs that do nothing (startprobe/), each linking
// more than the one before, and then switchboard itself: what a process
// pays to start and exit before it does any work, by what it carries. On
// a machine where a page fault is dear, that grows with the code and data
// a process initialises, not with what it then does.
var startupLayers = []struct{ name, pkg, what string }{
	{"runtime", "./startprobe/runtime", "Go's runtime alone"},
	{"gosdk", "./startprobe/gosdk", "+ go-sdk's mcp package (the bare client's)"},
	{"sqlite", "./startprobe/sqlite", "+ SQLite (modernc.org/sqlite)"},
	{"all", "./startprobe/all", "+ the rest of the library (Postgres, OAuth, telemetry), the panel, TOML"},
}

type startupRow struct {
	what         string
	p50          time.Duration
	status, peer bool // the rows compared last
}

// measureStartup builds the layers and times each start-to-exit runs
// times, the layers, `switchboard --version`, `switchboard status --json`
// with one lazy server and (peer not "") `mcp-proxy -help` taking turns.
func measureStartup(dir, sb, peer string, runs int) ([]startupRow, error) {
	var cmds []func() *exec.Cmd
	var rows []startupRow
	for _, l := range startupLayers {
		bin, err := build(dir, "startprobe-"+l.name, l.pkg, "")
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, func() *exec.Cmd { return exec.Command(bin) })
		rows = append(rows, startupRow{what: l.what})
	}
	cmds = append(cmds, func() *exec.Cmd {
		cmd := exec.Command(sb, "--version")
		cmd.Env = append(os.Environ(), "HOME="+dir)
		return cmd
	})
	rows = append(rows, startupRow{what: "switchboard --version: the command, all of it linked"})
	// status reads the configuration and the state directory but starts
	// nothing: the server stays lazy.
	home := filepath.Join(dir, "status-home")
	cfg := filepath.Join(home, ".config", "switchboard", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"f0":{"command":"/nonexistent/server"}}}`), 0o600); err != nil {
		return nil, err
	}
	cmds = append(cmds, func() *exec.Cmd {
		cmd := exec.Command(sb, "status", "--json")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
		return cmd
	})
	rows = append(rows, startupRow{what: "switchboard status --json, one lazy server", status: true})
	if peer != "" {
		cmds = append(cmds, func() *exec.Cmd { return exec.Command(peer, "-help") })
		rows = append(rows, startupRow{what: "mcp-proxy -help", peer: true})
	}
	lat := make([][]time.Duration, len(cmds))
	for i := range runs + 1 { // the first of each is a warm-up (page cache)
		for j, c := range cmds {
			cmd := c()
			t0 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil && !(rows[j].peer && cmd.ProcessState != nil) {
				// (mcp-proxy -help prints its usage and exits 2.)
				return nil, fmt.Errorf("%s: %v\n%s", cmd, err, out)
			}
			if i > 0 {
				lat[j] = append(lat[j], time.Since(t0))
			}
		}
	}
	for j := range rows {
		rows[j].p50 = pct(lat[j], 0.5)
	}
	return rows, nil
}

func printStartup(out io.Writer, rows []startupRow, runs int) {
	fmt.Fprintf(out, "Start and exit of a process that does nothing, by what it links (medians of %d runs)\n\n", runs)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "links\tms\tmore than the row above (ms)\t")
	var status, peer time.Duration
	for i, r := range rows {
		if r.status {
			status = r.p50
		}
		if r.peer {
			peer = r.p50
		}
		if r.status || r.peer {
			fmt.Fprintf(tw, "%s\t%s\t\t\n", r.what, ms(r.p50))
			continue
		}
		more := "–"
		if i > 0 {
			more = fmt.Sprintf("%+.1f", float64(r.p50-rows[i-1].p50)/float64(time.Millisecond))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", r.what, ms(r.p50), more)
	}
	_ = tw.Flush()
	if status > 0 && peer > 0 {
		fmt.Fprintf(out, "\ncold status ÷ mcp-proxy -help: %.2f\n", float64(status)/float64(peer))
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkoukk/tiktoken-go"
)

// peersDir is where the npm peers are: $MCP_PEERS_DIR, or
// testdata/mcp-peers of the product.
func peersDir() (string, error) {
	dir := os.Getenv("MCP_PEERS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "mcp-peers")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		return "", fmt.Errorf("the npm MCP peers are not installed in %s\nhint: run . .ci/peers.sh from the repository's root", dir)
	}
	return dir, nil
}

// servers is the configuration of the three servers over the fixture in
// dir.
func servers(peers, dir string) (map[string]any, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("finding node: %w", err)
	}
	entry := func(pkg string) string {
		return filepath.Join(peers, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	}
	return map[string]any{
		"fs":  map[string]any{"command": node, "args": []string{entry("server-filesystem"), filepath.Join(dir, "tree")}},
		"mem": map[string]any{"command": node, "args": []string{entry("server-memory")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"ev":  map[string]any{"command": node, "args": []string{entry("server-everything"), "stdio"}},
	}, nil
}

// result is a task's measure on both routes.
type result struct {
	task          task
	tools, script tally
	answer        string
}

func run(ctx context.Context, verbose bool, only string) error {
	peers, err := peersDir()
	if err != nil {
		return err
	}
	enc, err := loadEncoding()
	if err != nil {
		return fmt.Errorf("loading the tokenizer %s: %w", encoding, err)
	}
	work, err := os.MkdirTemp("", "switchboard-codemode-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "switchboard")
	build := exec.Command("go", "build", "-o", bin, "github.com/switchboard-mcp/switchboard/cmd/switchboard")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building switchboard (run in bench/): %v\n%s", err, out)
	}
	dir := filepath.Join(work, "fixture")
	// EvalSymlinks: the filesystem server answers with the real path.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return err
	}
	defs, err := servers(peers, dir)
	if err != nil {
		return err
	}
	var ts []task
	for _, t := range tasks() {
		if only == "" || t.name == only {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return fmt.Errorf("no task named %q", only)
	}
	var scriptTool int // tokens of mcpScript's definition
	var log io.Writer
	if verbose {
		log = os.Stdout
	}
	results := make([]result, len(ts))
	answers := make([][2]string, len(ts))
	// Each route runs every task in order on a fresh fixture and a fresh
	// serve in the same home: both start from the same state and change it
	// alike, so their answers must match.
	for route := range 2 {
		if err := writeFixture(dir); err != nil {
			return fmt.Errorf("writing the fixture: %w", err)
		}
		home := filepath.Join(work, fmt.Sprint("home", route))
		cs, err := startServe(ctx, bin, home, defs)
		if err != nil {
			return err
		}
		// Connect every server before measuring: a cold start is no
		// route's cost.
		for _, s := range []string{"fs", "mem", "ev"} {
			if _, err := (&agent{cs: cs, enc: enc}).mcp(ctx, map[string]any{"server": s}); err != nil {
				cs.Close()
				return fmt.Errorf("connecting %s: %w", s, err)
			}
		}
		if scriptTool == 0 {
			if scriptTool, err = scriptToolTokens(ctx, cs, enc); err != nil {
				return errors.Join(err, cs.Close())
			}
		}
		env := taskEnv{dir: filepath.Join(dir, "tree"), today: time.Now().Format("Mon Jan 02 2006")}
		for i, t := range ts {
			a := &agent{cs: cs, enc: enc, log: log}
			if log != nil {
				fmt.Fprintf(log, "\n### %s, %s route\n", t.name, [2]string{"tool-calling", "script"}[route])
			}
			var answer string
			for _, d := range t.discovery {
				if _, err := a.mcp(ctx, d); err != nil {
					err = fmt.Errorf("task %s: discovery: %w", t.name, err)
					return errors.Join(err, cs.Close())
				}
			}
			if route == 0 {
				answer, err = t.tools(ctx, a, env)
			} else {
				answer, err = runScript(ctx, a, t.script(env))
			}
			if err != nil {
				return errors.Join(fmt.Errorf("task %s: %w", t.name, err), cs.Close())
			}
			answers[i][route] = answer
			results[i].task = t
			if route == 0 {
				results[i].tools = a.t
			} else {
				results[i].script = a.t
			}
		}
		if err := cs.Close(); err != nil {
			return fmt.Errorf("stopping switchboard serve: %w", err)
		}
	}
	var differ []error
	for i, a := range answers {
		results[i].answer = a[0]
		if a[0] != a[1] {
			differ = append(differ, fmt.Errorf("task %s: the routes answer differently:\n  tool-calling: %q\n  script:       %q", ts[i].name, a[0], a[1]))
		}
	}
	if len(differ) > 0 {
		return errors.Join(differ...)
	}
	printTable(os.Stdout, results, scriptTool)
	return nil
}

// runScript runs src and returns its answer: the value, without the
// console lines.
func runScript(ctx context.Context, a *agent, src string) (string, error) {
	return a.script(ctx, src)
}

// scriptToolTokens counts mcpScript's definition as serve lists it.
func scriptToolTokens(ctx context.Context, cs *mcp.ClientSession, enc *tiktoken.Tiktoken) (int, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("listing the tools of serve: %w", err)
	}
	for _, t := range res.Tools {
		if t.Name == "mcpScript" {
			def, err := json.Marshal(t)
			if err != nil {
				return 0, err
			}
			return len(enc.Encode(string(def), nil, nil)), nil
		}
	}
	return 0, errors.New("switchboard serve lists no mcpScript tool: is settings.scriptMode on?")
}

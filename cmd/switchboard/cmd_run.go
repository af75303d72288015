package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchboard-mcp/switchboard/policy"
)

// maxScriptBytes bounds a script read from a file or standard input.
const maxScriptBytes = 1 << 20

func runCommand() *command {
	return &command{
		name: "run", summary: "run a code-mode script (JavaScript) over the tools",
		usage: "FILE|- [--yes] [--json]",
		help: `Runs a code-mode script, as the mcpScript tool of serve does with
settings.scriptMode (docs/codemode.md), and prints its answer: what the
script returns (or its last expression), then what it logged with
console.log. FILE is the script, or - to read it from standard input.

Inside the script: await tools.search({query, server?, limit?, offset?}),
await tools.describe({path, server?}), await tools.call(path, args,
{server}?), each giving {ok: true, data} or {ok: false, error: {code,
message}}. The script has no file system, network or timers; it is
stopped at settings.scriptTimeoutMs (30 s by default), after 100 tool
calls, or when its data grows past the memory bound. A script that fails
exits 1 with why on stderr (a syntax error or a throw with line:col).

Examples:
  switchboard run count-todos.js
  echo 'return (await tools.search({query: "read file"})).data.tools.length' | switchboard run -

Calls an approval rule covers ask on the terminal, as switchboard call
does; without a terminal they are denied, unless --yes approves them.

With --json, prints the whole answer: its details, with the script's value
as "structured" and its hash, calls, logs and error under "script".`,
		run: runRun,
	}
}

func runRun(ctx context.Context, e *env, args []string) (err error) {
	f := newFlags("run", true)
	f.addNoLogin()
	yes := f.Bool("yes", false, "approve the calls an approval rule asks for (docs/policy.md)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("run needs one FILE, or - to read the script from standard input")
	}
	name := pos[0]
	if name != "-" && !filepath.IsAbs(name) {
		name = filepath.Join(e.cwd, name)
	}
	src, err := readScript(name, pos[0], e.stdin)
	if err != nil {
		return err
	}
	ctx = policy.WithApprover(ctx, e.cliApprover(*yes))
	e.offline = e.offline || f.offline
	eng, err := e.openEngine(ctx, f.config, !f.noLogin)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	r := eng.RunScript(ctx, src)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return e.printResult(r, f.json)
}

// readScript reads a script from a file, or from r for "-".
// shown names it in errors.
func readScript(name, shown string, r io.Reader) (string, error) {
	what := shown
	if name == "-" {
		what = "standard input"
	} else {
		fh, err := os.Open(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("reading the script: %s does not exist", shown)
			}
			return "", fmt.Errorf("reading the script %s: %w", shown, err)
		}
		defer fh.Close()
		r = fh
	}
	data, err := io.ReadAll(io.LimitReader(r, maxScriptBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the script from %s: %w", what, err)
	}
	if len(data) > maxScriptBytes {
		return "", usagef("the script in %s is over %d bytes: a code-mode script is a short program", what, maxScriptBytes)
	}
	if len(data) == 0 {
		return "", usagef("the script in %s is empty", what)
	}
	return string(data), nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/searchbench"
)

func debugCommand() *command {
	return &command{
		name:    "debug",
		summary: "tools for developing switchboard",
		usage:   "search-eval --catalog FILE --queries FILE --out FILE [--k 10]",
		help: `Subcommands:

  search-eval   load a JSONL tool catalog ({"server","name","description",
                "inputSchema"} per line) into a fresh temporary catalog, run
                every query ({"id","query",…} per line) through the real
                search across all servers, and write the top k results
                ({"id","results":[{"server","name"},…]} per line) to --out.
                Score the output with ../shared/bench/search/score.py.`,
		hidden: true,
		run:    runDebug,
	}
}

func runDebug(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("debug needs a subcommand: search-eval")
	}
	switch args[0] {
	case "search-eval":
		return runSearchEval(ctx, e, args[1:])
	case "-h", "--help", "help":
		return errHelp
	}
	return usagef("unknown debug subcommand %q", args[0])
}

func runSearchEval(ctx context.Context, e *env, args []string) error {
	f := newFlags("debug search-eval", false)
	var catalogPath, queriesPath, outPath string
	var k int
	f.StringVar(&catalogPath, "catalog", "", "the JSONL tool catalog `file`")
	f.StringVar(&queriesPath, "queries", "", "the JSONL queries `file`")
	f.StringVar(&outPath, "out", "", "write the run to this `file`")
	f.IntVar(&k, "k", 10, "results per query")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	var missing []string
	for _, fl := range []struct{ name, v string }{{"--catalog", catalogPath}, {"--queries", queriesPath}, {"--out", outPath}} {
		if fl.v == "" {
			missing = append(missing, fl.name)
		}
	}
	switch {
	case len(pos) > 0:
		return usagef("search-eval takes no arguments")
	case len(missing) > 0:
		return usagef("search-eval needs %s", strings.Join(missing, ", "))
	case k <= 0:
		return usagef("--k must be positive")
	}
	cat, err := os.Open(inCwd(e, catalogPath))
	if err != nil {
		return err
	}
	defer cat.Close()
	qs, err := os.Open(inCwd(e, queriesPath))
	if err != nil {
		return err
	}
	defer qs.Close()
	out, err := os.Create(inCwd(e, outPath))
	if err != nil {
		return err
	}
	if err := searchbench.EvalRun(cat, qs, out, k); err != nil {
		out.Close()
		return fmt.Errorf("search-eval: %w", err)
	}
	return out.Close()
}

// inCwd resolves a relative path against the command's working directory.
func inCwd(e *env, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(e.cwd, path)
}

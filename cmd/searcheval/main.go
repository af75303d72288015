// Command searcheval measures Switchboard's search on a fixed set of tools
// and queries. It is a development tool, built apart from the switchboard
// binary so that the evaluation code is not shipped.
//
// It loads a JSONL tool catalog ({"server","name","description",
// "inputSchema"} per line) into a fresh temporary catalog, runs every query
// ({"id","query",…} per line) through the real search across all servers,
// and writes the top k results ({"id","results":[{"server","name"},…]} per
// line) to -out. Score the output with score.py of the benchmark set; see
// docs/search.md.
//
//	go run ./cmd/searcheval -catalog catalog.jsonl -queries queries.jsonl -out run.jsonl [-k 10]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/testkit/searchbench"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "searcheval:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(args []string, stderr io.Writer) error {
	f := flag.NewFlagSet("searcheval", flag.ContinueOnError)
	f.SetOutput(stderr)
	catalogPath := f.String("catalog", "", "the JSONL tool catalog `file`")
	queriesPath := f.String("queries", "", "the JSONL queries `file`")
	outPath := f.String("out", "", "write the run to this `file`")
	k := f.Int("k", 10, "results per query")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	var missing []string
	for _, fl := range []struct{ name, v string }{{"-catalog", *catalogPath}, {"-queries", *queriesPath}, {"-out", *outPath}} {
		if fl.v == "" {
			missing = append(missing, fl.name)
		}
	}
	switch {
	case f.NArg() > 0:
		return usageError{errors.New("takes no arguments")}
	case len(missing) > 0:
		return usageError{fmt.Errorf("needs %s", strings.Join(missing, ", "))}
	case *k <= 0:
		return usageError{errors.New("-k must be positive")}
	}
	cat, err := os.Open(*catalogPath)
	if err != nil {
		return err
	}
	defer cat.Close()
	qs, err := os.Open(*queriesPath)
	if err != nil {
		return err
	}
	defer qs.Close()
	out, err := os.Create(*outPath)
	if err != nil {
		return err
	}
	if err := searchbench.EvalRun(cat, qs, out, *k); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func callCommand() *command {
	return &command{
		name: "call", summary: "call a tool once",
		usage: "NAME [--server S] [key=value … | --args JSON | --args -] [--json]",
		help: `Calls a tool exactly once and prints its result. Arguments are key=value
pairs, where a value is taken as JSON when it parses (n=3, ok=true,
tags='["a"]') and as a string otherwise (name=Ada); or one JSON object with
--args, or read from standard input with --args -. A tool that reports an
error exits 1 with its text on stderr.

Examples:
  switchboard call get-sum --server everything a=2 b=3
  switchboard call everything_echo message='hello there'
  echo '{"a": 1, "b": 2}' | switchboard call get-sum --args -

With --json, prints the result's structured details (documented in docs/cli.md).`,
		run: runCall,
	}
}

func runCall(ctx context.Context, e *env, args []string) error {
	f := newFlags("call", true)
	server := f.String("server", "", "the `server` of the tool")
	argsJSON := f.String("args", "", "the arguments as one JSON `object`, or - to read it from standard input")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usagef("call needs the tool's NAME")
	}
	toolArgs, err := callArgs(pos[1:], *argsJSON, e.stdin)
	if err != nil {
		return err
	}
	return e.runRequest(ctx, f, &proxy.Request{Action: proxy.ActionCall, Name: pos[0], Server: *server, Args: toolArgs})
}

// callArgs builds the arguments from key=value pairs or --args.
func callArgs(pairs []string, argsJSON string, stdin io.Reader) (map[string]any, error) {
	if argsJSON != "" && len(pairs) > 0 {
		return nil, usagef("give key=value pairs or --args, not both")
	}
	if argsJSON == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("reading arguments from standard input: %w", err)
		}
		argsJSON = string(data)
	}
	if argsJSON != "" {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(argsJSON))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil || m == nil {
			return nil, usagef("--args must be a JSON object such as '{\"a\": 1}'")
		}
		return m, nil
	}
	m := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usagef("argument %q is not key=value", p)
		}
		m[k] = jsonOrString(v)
	}
	return m, nil
}

// jsonOrString parses v as JSON if it is JSON, else keeps the string.
func jsonOrString(v string) any {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return v
	}
	return out
}

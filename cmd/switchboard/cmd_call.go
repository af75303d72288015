package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/callargs"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

func callCommand() *command {
	return &command{
		name: "call", summary: "call a tool once",
		usage: "NAME [--server S] [key=value … | --args JSON | --args -] [--yes] [--json]",
		help: `Calls a tool exactly once and prints its result. A tool that reports an
error exits 1 with its text on stderr.

Arguments are key=value pairs, each taken as the type the tool's input
schema (from the catalog) gives it: a string as written (message=123 is
"123"), a number, integer or boolean as such (n=3, ok=true), an array or
object as JSON (tags='["a","b"]'). A value that does not fit, a required
argument left out, or a name the tool does not have is an error (exit 2)
that names the argument and shows an example; nothing is called. Where the
schema gives no type, a value is JSON if it parses and a string otherwise.
Or give one JSON object with --args, or --args - to read it from standard
input: it is sent as it is.

Examples:
  switchboard call get-sum --server everything a=2 b=3
  switchboard call everything_echo message='hello there'
  echo '{"a": 1, "b": 2}' | switchboard call get-sum --args -

A call that an approval rule covers (settings.approve, a server's approve;
docs/policy.md) asks on the terminal first: allow once, for this session,
or deny. Without a terminal it is denied, unless --yes approves it.

With --json, prints the result's structured details (documented in docs/cli.md).`,
		run: runCall,
	}
}

func runCall(ctx context.Context, e *env, args []string) error {
	f := newFlags("call", true)
	f.addNoLogin()
	server := f.String("server", "", "the `server` of the tool")
	argsJSON := f.String("args", "", "the arguments as one JSON `object`, or - to read it from standard input")
	yes := f.Bool("yes", false, "approve this call where an approval rule asks for it (docs/policy.md)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	ctx = policy.WithApprover(ctx, e.cliApprover(*yes))
	if len(pos) < 1 {
		return usagef("call needs the tool's NAME")
	}
	name, pairs := pos[0], pos[1:]
	e.preconnect, e.preconnectTool = *server, name
	if *argsJSON != "" {
		if len(pairs) > 0 {
			return usagef("give key=value pairs or --args, not both")
		}
		toolArgs, err := argsObject(*argsJSON, e.stdin)
		if err != nil {
			return err
		}
		req := &proxy.Request{Action: proxy.ActionCall, Name: name, Server: *server, Args: toolArgs}
		return e.runBuiltWith(ctx, f, e.newCallProgress(name), func(context.Context, *switchboard.Engine) (*proxy.Request, error) { return req, nil })
	}
	if _, err := typedArgs(pairs, nil, fmt.Sprintf("%q", name)); err != nil {
		return err // not key=value: no need to look the tool up
	}
	return e.runBuiltWith(ctx, f, e.newCallProgress(name), func(ctx context.Context, eng *switchboard.Engine) (*proxy.Request, error) {
		return typedCall(ctx, eng, name, *server, pairs)
	})
}

// typedCall builds the call of a tool from key=value pairs typed by the
// tool's input schema, which describe finds in the catalog. When describe
// fails, the call is built untyped and reports the same failure itself;
// but when describe failed because connecting the server just failed, its
// answer is the command's (an *answered error): a call would only try
// again, and a server that does not answer would take the whole request
// timeout a second time.
func typedCall(ctx context.Context, eng *switchboard.Engine, name, server string, pairs []string) (*proxy.Request, error) {
	req := &proxy.Request{Action: proxy.ActionCall, Name: name, Server: server}
	var schema *callargs.Schema
	display := fmt.Sprintf("%q", name)
	began := time.Now()
	d := eng.Do(ctx, &proxy.Request{Action: proxy.ActionDescribe, Name: name, Server: server})
	if !d.IsError && d.Details.Tool != nil {
		t := d.Details.Tool
		req.Name, req.Server = t.Name, t.Server
		schema, display = callargs.Parse(t.InputSchema), fmt.Sprintf("%q on %q", t.Name, t.Server)
	} else if d.IsError && connectFailed(ctx, eng, cmp.Or(server, d.Details.Server), began) {
		d.Details.Operation = string(proxy.ActionCall)
		return nil, &answered{d}
	}
	args, err := typedArgs(pairs, schema, display)
	if err != nil {
		return nil, err
	}
	req.Args = args
	return req, nil
}

// connectFailed reports whether connecting server failed since began.
func connectFailed(ctx context.Context, eng *switchboard.Engine, server string, began time.Time) bool {
	for _, st := range eng.Status(ctx) {
		if st.Name == server {
			return (st.State == proxy.StateFailed || st.State == proxy.StateNeedsAuth) && !st.ErrorAt.Before(began)
		}
	}
	return false
}

// argsObject reads --args: one JSON object, or - for standard input. It is
// sent as given.
func argsObject(argsJSON string, stdin io.Reader) (map[string]any, error) {
	if argsJSON == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("reading arguments from standard input: %w", err)
		}
		argsJSON = string(data)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(argsJSON))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, usagef("--args must be a JSON object such as '{\"a\": 1}'")
	}
	return m, nil
}

// typedArgs types key=value pairs by a tool's schema (see package
// callargs); an argument that does not fit is a usage error.
func typedArgs(pairs []string, s *callargs.Schema, tool string) (map[string]any, error) {
	m, err := callargs.Args(pairs, s, tool)
	var ce *callargs.Error
	if errors.As(err, &ce) {
		return nil, usagef("%s", ce.Msg)
	}
	return m, err
}

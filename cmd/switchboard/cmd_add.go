package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

func addCommand() *command {
	return &command{
		name:    "add",
		summary: "add a server to your own configuration",
		usage:   "NAME [--project|--global] [--env K=V]… [--json] -- COMMAND [ARGS…]\n       switchboard add REGISTRY-NAME[@VERSION] [--arg K=V]… [--as NAME] [--use KIND] [--dry-run]\n       switchboard add NAME --url URL [--type sse] [--header K=V]… [--project|--global] [--json]",
		help: `Adds a stdio server (the command after --) or an HTTP server (--url) to
Switchboard's own configuration file: the user-global one by default, the
project's with --project. Comments and formatting in that file are kept.
Switchboard never writes another host's file or a shared file.

Secrets are written as references, never as values: --env GITHUB_TOKEN alone
writes "GITHUB_TOKEN": "${GITHUB_TOKEN}", resolved from the environment only
when the server connects. A credential-shaped literal (a key containing TOKEN,
SECRET, PASSWORD, API_KEY, …, or an Authorization header) is refused.

A registry name (NAMESPACE/NAME, as switchboard registry search lists it)
adds that server from the MCP registry: the package this machine can run
(npx, uvx, dnx, docker or podman), else its remote, with the exact version
pinned. Required values are asked on the terminal (defaults shown), or
given with --arg KEY=VALUE; secret ones are asked without echo and kept in
the secret store, written as ${secret:NAME}, never taken from the command
line. See docs/registry.md.

With --json, prints {"action", "server", "file", "scope", "state",
"source"}: the file written and the server's state afterwards (see
docs/cli.md).

Examples:
  switchboard add everything -- npx -y @modelcontextprotocol/server-everything
  switchboard add github --env GITHUB_TOKEN -- npx -y @modelcontextprotocol/server-github
  switchboard add api --url https://example.com/mcp --header 'Authorization=Bearer ${API_TOKEN}'`,
		run: runAdd,
	}
}

func runAdd(ctx context.Context, e *env, args []string) error {
	f := newFlags("add", true)
	var scope scopeFlags
	scope.add(f, "write")
	url := f.String("url", "", "the `URL` of a Streamable HTTP (or, with --type sse, SSE) server")
	typ := f.String("type", "", "the transport: stdio, http or sse (inferred when absent)")
	cwd := f.String("cwd", "", "the working `directory` of a stdio server")
	var envs, headers stringList
	f.Var(&envs, "env", "an environment `K=V` for a stdio server; K alone means K=${K} (repeatable)")
	f.Var(&headers, "header", "an HTTP header `K=V` (or 'K: V') (repeatable)")
	force := f.Bool("force", false, "replace an existing definition of NAME in that file")
	var answers stringList
	f.Var(&answers, "arg", "for a registry NAME: the value `KEY=VALUE` of an argument, variable or environment variable the entry asks for; never a secret (repeatable)")
	as := f.String("as", "", "for a registry NAME: the server's `name` in your configuration (default: the registry name's last part)")
	use := f.String("use", "", "for a registry NAME: the `kind` to use: npm, pypi, nuget, oci, mcpb or remote (default: the first that this machine runs)")
	dryRun := f.Bool("dry-run", false, "for a registry NAME: print the definition that add would write, and write nothing")
	pos, cmdline, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("add needs exactly one server NAME before the flags or --")
	}
	if *url == "" && len(cmdline) == 0 && strings.Contains(pos[0], "/") {
		sc, err := scope.scope(config.ScopeGlobal)
		if err != nil {
			return err
		}
		m, err := pairs(answers, "=", false)
		if err != nil {
			return err
		}
		if m == nil {
			m = map[string]string{}
		}
		ra := &registryAdd{e: e, cfg: config.Load(e.dirs(f.config)), as: *as, answers: m, use: *use, dryRun: *dryRun, scope: sc, force: *force, json: f.json}
		return ra.run(ctx, pos[0])
	}
	if len(answers) > 0 || *as != "" || *use != "" || *dryRun {
		return usagef("--arg, --as, --use and --dry-run are for a registry NAME (NAMESPACE/NAME, such as io.github.user/weather), added without a command or --url")
	}
	def, err := definitionFrom(*url, *typ, *cwd, cmdline, envs, headers)
	if err != nil {
		return err
	}
	sc, err := scope.scope(config.ScopeGlobal)
	if err != nil {
		return err
	}
	d := e.dirs(f.config)
	path, err := config.AddServer(d, sc, pos[0], def, *force)
	if err != nil {
		return err
	}
	if f.json {
		if err := writeJSON(e.stdout, change(d, "added", pos[0], path, sc)); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stderr, "added %q to %s\n", pos[0], e.pretty(path))
	}
	if sc == config.ScopeProject && !config.Load(d).Project.Trusted {
		fmt.Fprintln(e.stderr, "hint: the project is not trusted, so its servers are ignored; run switchboard trust")
	}
	return nil
}

func definitionFrom(url, typ, cwd string, cmdline, envs, headers []string) (config.Definition, error) {
	def := config.Definition{Type: typ, Cwd: cwd}
	switch {
	case url != "" && len(cmdline) > 0:
		return def, usagef("give either --url or a command after --, not both")
	case url == "" && len(cmdline) == 0:
		return def, usagef("give a command after -- (stdio) or --url (HTTP), or a registry name such as io.github.user/weather (switchboard registry search WORDS)")
	case url != "":
		def.URL = url
		if len(envs) > 0 || cwd != "" {
			return def, usagef("--env and --cwd are for stdio servers; an HTTP server takes --header")
		}
	default:
		def.Command, def.Args = cmdline[0], cmdline[1:]
		if len(headers) > 0 {
			return def, usagef("--header is for HTTP servers; a stdio server takes --env")
		}
	}
	var err error
	if def.Env, err = pairs(envs, "=", true); err != nil {
		return def, err
	}
	if def.Headers, err = pairs(headers, "=:", false); err != nil {
		return def, err
	}
	return def, nil
}

// pairs parses K=V flags. With bare, a lone K means the reference ${K}.
func pairs(list []string, seps string, bare bool) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range list {
		i := strings.IndexAny(kv, seps)
		switch {
		case i > 0:
			m[strings.TrimSpace(kv[:i])] = strings.TrimSpace(kv[i+1:])
		case i < 0 && bare && kv != "":
			m[kv] = "${" + kv + "}"
		default:
			return nil, usagef("%q is not K=V", kv)
		}
	}
	return m, nil
}

package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/jsonc"
)

func TestPrecedence(t *testing.T) {
	// Each subtest writes the k+1 lowest sources. Every file defines "x"
	// with its own command; only the lowest gives it args and env, which
	// must not leak into a higher definition. Every file also defines a
	// server of its own, which is always there.
	kinds := []Kind{KindShared, KindAgents, KindAgents, KindUser, KindProjectShared, KindProject, KindExplicit}
	for k := range kinds {
		t.Run(fmt.Sprintf("%d %s", k, kinds[k]), func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			order := []string{p.shared, p.agents, p.agentsNested, p.user, p.projectShared, p.project, p.explicit}
			for i := 0; i <= k; i++ {
				x := fmt.Sprintf(`{"command": "cmd-%d"}`, i)
				if i == 0 {
					x = `{"command": "cmd-0", "args": ["--lowest"], "env": {"LOW": "1"}, "lifecycle": "eager"}`
				}
				writeFile(t, order[i], fmt.Sprintf(`{"mcpServers": {"x": %s, "only-%d": {"command": "own"}}}`, x, i))
			}
			if k >= 4 {
				trust(t, d)
			}
			c := Load(d)
			noErrors(t, c)
			x := mustServer(t, c, "x")
			if x.Command != fmt.Sprintf("cmd-%d", k) || x.Source.Path != order[k] || x.Source.Kind != kinds[k] {
				t.Errorf("x: got %q from %s (%s), want cmd-%d from %s (%s)", x.Command, x.Source.Path, x.Source.Kind, k, order[k], kinds[k])
			}
			if k > 0 && (x.Args != nil || x.Env != nil || x.Lifecycle != LifecycleLazy) {
				t.Errorf("x: got args %v, env %v, lifecycle %s merged from a lower file, want none of them", x.Args, x.Env, x.Lifecycle)
			}
			for i := 0; i <= k; i++ {
				s := mustServer(t, c, fmt.Sprintf("only-%d", i))
				if s.Source.Path != order[i] {
					t.Errorf("only-%d: got source %s, want %s", i, s.Source.Path, order[i])
				}
			}
			if got, want := len(c.Servers), k+2; got != want {
				t.Errorf("servers: got %d (%v), want %d", got, allNames(c), want)
			}
		})
	}
}

func TestDisabledStub(t *testing.T) {
	tests := []struct {
		name       string
		files      func(p paths) map[string]string
		trust      bool
		disabled   bool
		command    string
		disabledBy func(p paths) string
		warning    string // in a warning, if any
	}{
		{
			name: "user stub disables shared definition",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.shared: `{"mcpServers": {"x": {"command": "low", "args": ["a"]}}}`,
					p.user:   `{"mcpServers": {"x": {"disabled": true}}}`,
				}
			},
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return p.user },
		},
		{
			name: "explicit stub disables user definition",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.user:     `{"mcpServers": {"x": {"command": "low"}}}`,
					p.explicit: `{"mcpServers": {"x": {"disabled": true}}}`,
				}
			},
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return p.explicit },
		},
		{
			name: "stub with host fields in a shared file",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.shared: `{"mcpServers": {"x": {"command": "low"}}}`,
					p.agents: `{"mcpServers": {"x": {"disabled": true, "autoApprove": ["t"], "description": "d"}}}`,
				}
			},
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return p.agents },
		},
		{
			name: "trusted project stub",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.user:          `{"mcpServers": {"x": {"command": "low"}}}`,
					p.projectShared: `{"mcpServers": {"x": {"disabled": true}}}`,
				}
			},
			trust:    true,
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return p.projectShared },
		},
		{
			name: "untrusted project stub disables nothing",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.user:          `{"mcpServers": {"x": {"command": "low"}}}`,
					p.projectShared: `{"mcpServers": {"x": {"disabled": true}}}`,
				}
			},
			disabled: false, command: "low",
			disabledBy: func(p paths) string { return "" },
		},
		{
			name: "full disabled definition replaces, DisabledBy empty",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.shared: `{"mcpServers": {"x": {"command": "low"}}}`,
					p.user:   `{"mcpServers": {"x": {"command": "high", "disabled": true}}}`,
				}
			},
			disabled: true, command: "high",
			disabledBy: func(p paths) string { return "" },
		},
		{
			name: "enabled false in a shared file disables it",
			files: func(p paths) map[string]string {
				return map[string]string{p.shared: `{"mcpServers": {"x": {"command": "low", "enabled": false}}}`}
			},
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return "" },
		},
		{
			name: "enabled false alone in a shared file disables a lower definition",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.shared: `{"mcpServers": {"x": {"command": "low"}}}`,
					p.agents: `{"mcpServers": {"x": {"enabled": false}}}`,
				}
			},
			disabled: true, command: "low",
			disabledBy: func(p paths) string { return p.agents },
		},
		{
			name: "enabled true in a shared file changes nothing",
			files: func(p paths) map[string]string {
				return map[string]string{p.shared: `{"mcpServers": {"x": {"command": "low", "enabled": true}}}`}
			},
			disabled: false, command: "low",
			disabledBy: func(p paths) string { return "" },
		},
		{
			name: "stub without a lower definition warns",
			files: func(p paths) map[string]string {
				return map[string]string{p.user: `{"mcpServers": {"x": {"disabled": true}}}`}
			},
			disabled: true, command: "",
			disabledBy: func(p paths) string { return "" },
			warning:    `{"disabled": true} disables nothing: no lower file defines "x"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			for path, text := range tt.files(p) {
				writeFile(t, path, text)
			}
			if tt.trust {
				trust(t, d)
			}
			c := Load(d)
			noErrors(t, c)
			x := mustServer(t, c, "x")
			if x.Disabled != tt.disabled || x.Command != tt.command || x.DisabledBy != tt.disabledBy(p) {
				t.Errorf("x: got disabled %v, command %q, DisabledBy %q; want %v, %q, %q",
					x.Disabled, x.Command, x.DisabledBy, tt.disabled, tt.command, tt.disabledBy(p))
			}
			_, err := c.Usable("x")
			if tt.disabled != errors.Is(err, ErrDisabled) {
				t.Errorf("Usable: got %v, want disabled %v", err, tt.disabled)
			}
			if got := slices.Contains(c.Names(), "x"); got == tt.disabled {
				t.Errorf("Names: got %v, want x listed %v", c.Names(), !tt.disabled)
			}
			warnings := problemText(c.Warnings())
			if tt.warning != "" && !strings.Contains(warnings, tt.warning) {
				t.Errorf("warnings: got %q, want %q", warnings, tt.warning)
			}
			if tt.warning == "" && strings.Contains(warnings, "disables nothing") {
				t.Errorf("warnings: got %q, want no stub warning", warnings)
			}
		})
	}
}

func TestFiles(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.agents, `{"mcpServers": {"b": {"command": "b"}, "a": {"command": "a"}}}`)
	writeFile(t, p.user, `{"mcpServers": {`) // invalid
	writeFile(t, p.projectShared, `{"mcpServers": {"p": {"command": "p"}}}`)
	c := Load(d)
	want := []File{
		{Source: Source{Kind: KindShared, Path: p.shared}, State: FileMissing},
		{Source: Source{Kind: KindAgents, Path: p.agents}, State: FileLoaded, Servers: []string{"b", "a"}},
		{Source: Source{Kind: KindAgents, Path: p.agentsNested}, State: FileMissing},
		{Source: Source{Kind: KindUser, Path: p.user}, State: FileInvalid},
		{Source: Source{Kind: KindProjectShared, Path: p.projectShared}, State: FileIgnored, Servers: []string{"p"}},
		{Source: Source{Kind: KindProject, Path: p.project}, State: FileMissing},
		{Source: Source{Kind: KindExplicit, Path: p.explicit}, State: FileLoaded},
	}
	if diff := cmp.Diff(want, c.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
}

func TestMissingExplicitFileFailsClosed(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `{"mcpServers": {"a": {"command": "a"}}}`)
	d.Explicit = filepath.Join(d.Home, "typo.json")
	c := Load(d)
	if !errors.Is(c.Err(), ErrInvalid) {
		t.Fatalf("Err() = %v, want ErrInvalid for a missing --config file", c.Err())
	}
	if !strings.Contains(c.Err().Error(), "typo.json: the configuration file given with --config or SWITCHBOARD_CONFIG does not exist") {
		t.Errorf("Err() = %q, want it to name the missing file", c.Err())
	}
	if _, err := c.Usable("a"); err == nil {
		t.Error("Usable succeeded although the explicit file is missing")
	}
}

// decode decodes text as a file of the given kind.
func decode(kind Kind, text string) (*document, []Problem, bool) {
	return decodeFile(Source{Kind: kind, Path: "/cfg/" + string(kind) + ".json"}, []byte(text))
}

func srv(body string) string { return `{"mcpServers": {"s": ` + body + `}}` }

func TestDecodeProblems(t *testing.T) {
	const ours, shared = KindUser, KindShared
	type want struct {
		sev     Severity // "" for no problem at all
		path    string
		message string // in the message
		fatal   bool
	}
	// An error in one server's entry makes that server invalid and leaves
	// the others (issue 30); anywhere else it fails the file closed.
	errAt := func(path, msg string) want { return want{SeverityError, path, msg, serverOf(path) == ""} }
	// A server's name is not in its entry: a bad one fails the file.
	nameErrAt := func(path, msg string) want { return want{SeverityError, path, msg, true} }
	tests := []struct {
		name string
		kind Kind
		text string
		want want
	}{
		// Strict and tolerant files.
		{"unknown field, ours", ours, srv(`{"command": "x", "comand": "y"}`), errAt("mcpServers.s", `unknown field "comand" (known fields: type, command,`)},
		{"unknown field, explicit", KindExplicit, srv(`{"command": "x", "comand": "y"}`), errAt("mcpServers.s", `unknown field "comand"`)},
		{"unknown field, project", KindProject, srv(`{"command": "x", "comand": "y"}`), errAt("mcpServers.s", `unknown field "comand"`)},
		{"unknown field, shared", shared, srv(`{"command": "x", "comand": "y"}`), want{SeverityWarning, "mcpServers.s", `unknown field "comand" ignored`, false}},
		{"unknown field, agents", KindAgents, srv(`{"command": "x", "comand": "y"}`), want{SeverityWarning, "mcpServers.s", `unknown field "comand" ignored`, false}},
		{"unknown field, project .mcp.json", KindProjectShared, srv(`{"command": "x", "comand": "y"}`), want{SeverityWarning, "mcpServers.s", `unknown field "comand" ignored`, false}},
		{"host fields, shared", shared, srv(`{"command": "x", "autoApprove": ["a"], "alwaysAllow": [], "timeout": 30, "description": "d", "enabled": true, "envFile": ".env"}`), want{}},
		{"host field, ours", ours, srv(`{"command": "x", "autoApprove": []}`), errAt("mcpServers.s", `unknown field "autoApprove"`)},
		{"unknown top-level field, ours", ours, `{"mcpServers": {}, "servers": {}}`, errAt("", `unknown field "servers"`)},
		{"settings and imports, ours", ours, `{"$schema": "x", "mcpServers": {}, "settings": {}, "imports": []}`, want{}},

		// Wrong types.
		{"file not an object", ours, `[]`, errAt("", "the file must be an object, not an array")},
		{"mcpServers not an object", shared, `{"mcpServers": []}`, errAt("mcpServers", "mcpServers must be an object, not an array")},
		{"server not an object", shared, srv(`"npx"`), errAt("mcpServers.s", "mcpServers.s must be an object, not a string")},
		{"command number", ours, srv(`{"command": 1}`), errAt("mcpServers.s.command", "must be a string, not a number")},
		{"command empty", ours, srv(`{"command": ""}`), errAt("mcpServers.s.command", "must not be empty")},
		{"args string", ours, srv(`{"command": "x", "args": "-y"}`), errAt("mcpServers.s.args", "must be an array of strings, not a string")},
		{"args element", ours, srv(`{"command": "x", "args": ["a", 1]}`), errAt("mcpServers.s.args[1]", "must be a string, not a number")},
		{"env array", ours, srv(`{"command": "x", "env": []}`), errAt("mcpServers.s.env", "must be an object, not an array")},
		{"env number, ours", ours, srv(`{"command": "x", "env": {"PORT": 1}}`), errAt("mcpServers.s.env.PORT", "must be a string, not a number")},
		{"env number, shared", shared, srv(`{"command": "x", "env": {"PORT": 1, "DEBUG": true}}`), want{}},
		{"env object, shared", shared, srv(`{"command": "x", "env": {"PORT": {}}}`), errAt("mcpServers.s.env.PORT", "must be a string, not an object")},
		{"headers null", ours, srv(`{"url": "https://h/mcp", "headers": {"A": null}}`), errAt("mcpServers.s.headers.A", "must be a string, not null")},
		{"disabled string", ours, srv(`{"command": "x", "disabled": "yes"}`), errAt("mcpServers.s.disabled", "must be true or false, not a string")},
		{"lifecycle number", ours, srv(`{"command": "x", "lifecycle": 5}`), errAt("mcpServers.s.lifecycle", "must be a string, not a number")},
		{"idleTimeout string", ours, srv(`{"command": "x", "idleTimeout": "10"}`), errAt("mcpServers.s.idleTimeout", "must be a number, not a string")},
		{"directTools string", ours, srv(`{"command": "x", "directTools": "all"}`), errAt("mcpServers.s.directTools", "must be true, false, \"search\" or an array of tool names, not a string")},
		{"directTools element", ours, srv(`{"command": "x", "directTools": [true]}`), errAt("mcpServers.s.directTools[0]", "must be a string, not a boolean")},
		{"includeTools string", ours, srv(`{"command": "x", "includeTools": "a*"}`), errAt("mcpServers.s.includeTools", "must be an array of strings")},
		{"searchKeywords array", ours, srv(`{"command": "x", "searchKeywords": []}`), errAt("mcpServers.s.searchKeywords", "must be an object, not an array")},
		{"searchKeywords words", ours, srv(`{"command": "x", "searchKeywords": {"t": "w"}}`), errAt("mcpServers.s.searchKeywords.t", "must be an array of strings, not a string")},
		{"reconnect bool", ours, srv(`{"command": "x", "reconnect": true}`), errAt("mcpServers.s.reconnect", "must be an object, not a boolean")},

		// Duplicates.
		{"duplicate field, ours", ours, srv(`{"command": "x", "command": "y"}`), errAt("mcpServers.s.command", `duplicate key "command"`)},
		{"duplicate field, shared", shared, srv(`{"command": "x", "command": "y"}`), want{SeverityWarning, "mcpServers.s.command", `duplicate key "command": the last one counts`, false}},
		{"duplicate server, ours", ours, `{"mcpServers": {"s": {"command": "a"}, "s": {"command": "b"}}}`, nameErrAt("mcpServers.s", `duplicate key "s"`)},
		{"duplicate top-level, ours", ours, `{"mcpServers": {}, "mcpServers": {}}`, errAt("mcpServers", `duplicate key "mcpServers"`)},

		// Names.
		{"name with a space", ours, `{"mcpServers": {"bad name": {"command": "x"}}}`, nameErrAt("mcpServers.bad name", `invalid server name "bad name"`)},
		{"empty name", shared, `{"mcpServers": {"": {"command": "x"}}}`, errAt("mcpServers.", `invalid server name ""`)},
		{"long name", ours, `{"mcpServers": {"` + strings.Repeat("n", 65) + `": {"command": "x"}}}`, nameErrAt("mcpServers."+strings.Repeat("n", 65), "invalid server name")},
		{"dotted name", ours, `{"mcpServers": {"a.b": {"command": "x"}}}`, nameErrAt("mcpServers.a.b", `invalid server name "a.b"`)},

		// Transports.
		{"command and url", ours, srv(`{"command": "x", "url": "https://h/mcp"}`), errAt("mcpServers.s", `has both "command" and "url"`)},
		{"neither", ours, srv(`{}`), errAt("mcpServers.s", `needs "command" (stdio) or "url" (HTTP)`)},
		{"only disabled false", ours, srv(`{"disabled": false}`), errAt("mcpServers.s", `needs "command" (stdio) or "url" (HTTP)`)},
		{"only args", shared, srv(`{"args": ["a"]}`), errAt("mcpServers.s", `needs "command" (stdio) or "url" (HTTP)`)},
		{"headers on stdio", ours, srv(`{"command": "x", "headers": {"A": "b"}}`), errAt("mcpServers.s.headers", `"headers" belong to HTTP servers`)},
		{"args on http", ours, srv(`{"url": "https://h/mcp", "args": ["a"]}`), errAt("mcpServers.s.args", `"args" belongs to stdio servers`)},
		{"env on http", ours, srv(`{"url": "https://h/mcp", "env": {"A": "b"}}`), errAt("mcpServers.s.env", `"env" belongs to stdio servers`)},
		{"cwd on sse", ours, srv(`{"type": "sse", "url": "https://h/sse", "cwd": "/tmp"}`), errAt("mcpServers.s.cwd", `"cwd" belongs to stdio servers`)},
		{"stdio type with url", ours, srv(`{"type": "stdio", "url": "https://h/mcp"}`), errAt("mcpServers.s", `type "stdio" needs "command"`)},
		{"http type with command", ours, srv(`{"type": "http", "command": "x"}`), errAt("mcpServers.s", `type "http" needs "url"`)},
		{"sse type with command", shared, srv(`{"type": "sse", "command": "x"}`), errAt("mcpServers.s", `type "sse" needs "url"`)},
		{"unknown type", ours, srv(`{"type": "websocket", "url": "wss://h"}`), errAt("mcpServers.s.type", `not "websocket"`)},
		{"type number", ours, srv(`{"type": 1, "command": "x"}`), errAt("mcpServers.s.type", "must be a string")},
		{"ftp url", ours, srv(`{"url": "ftp://h/x"}`), errAt("mcpServers.s.url", "must be an http:// or https:// URL")},
		{"url without host", ours, srv(`{"url": "https:///mcp"}`), errAt("mcpServers.s.url", "must be an http:// or https:// URL")},
		{"relative url", ours, srv(`{"url": "/mcp"}`), errAt("mcpServers.s.url", "must be an http:// or https:// URL")},
		{"reference in url host", ours, srv(`{"url": "https://${MCP_HOST}/mcp"}`), want{}},
		{"reference in url port", ours, srv(`{"url": "http://localhost:${PORT}/mcp"}`), want{}},
		{"reference in url subdomain", ours, srv(`{"url": "https://${TENANT}.example.com/mcp"}`), want{}},
		{"reference as url", ours, srv(`{"url": "${MCP_URL}"}`), want{}},
		{"reference as url base", ours, srv(`{"url": "${MCP_BASE}/mcp"}`), want{}},
		{"$env as url", ours, srv(`{"url": "$env:MCP_URL"}`), want{}},
		{"reference in url query", ours, srv(`{"url": "https://h/mcp?key=${KEY}"}`), want{}},
		{"reference as url password", ours, srv(`{"url": "https://me:${PASSWORD}@h/mcp"}`), want{}},
		{"literal url password", ours, srv(`{"url": "https://me:hunter2@h/mcp"}`), want{SeverityError, "mcpServers.s.url", "a password in the URL must be a reference", false}},
		{"literal url password, reference user", ours, srv(`{"url": "https://${USER}:hunter2@h/mcp"}`), want{SeverityError, "mcpServers.s.url", "a password in the URL must be a reference", false}},
		{"url user without password", ours, srv(`{"url": "https://me@h/mcp"}`), want{}},
		{"reference in invalid url", ours, srv(`{"url": "ftp://h/${X}"}`), errAt("mcpServers.s.url", "must be an http:// or https:// URL")},

		// Values and ranges.
		{"lifecycle", ours, srv(`{"command": "x", "lifecycle": "sometimes"}`), errAt("mcpServers.s.lifecycle", `not "sometimes"`)},
		{"idleTimeout negative", ours, srv(`{"command": "x", "idleTimeout": -1}`), errAt("mcpServers.s.idleTimeout", "must be a whole number from 0 to 10080, not -1")},
		{"idleTimeout over a week", ours, srv(`{"command": "x", "idleTimeout": 10081}`), errAt("mcpServers.s.idleTimeout", "from 0 to 10080")},
		{"idleTimeout fraction", ours, srv(`{"command": "x", "idleTimeout": 1.5}`), errAt("mcpServers.s.idleTimeout", "whole number")},
		{"idleTimeout out of float range", ours, srv(`{"command": "x", "idleTimeout": 1e400}`), errAt("mcpServers.s.idleTimeout", "whole number")},
		{"idleTimeout huge negative", ours, srv(`{"command": "x", "idleTimeout": -1e400}`), errAt("mcpServers.s.idleTimeout", "whole number")},
		{"idleTimeout 2^63", ours, srv(`{"command": "x", "idleTimeout": 9223372036854775808}`), errAt("mcpServers.s.idleTimeout", "whole number")},
		{"idleTimeout long literal", ours, srv(`{"command": "x", "idleTimeout": ` + strings.Repeat("9", 500) + `}`), errAt("mcpServers.s.idleTimeout", "whole number")},
		{"idleTimeout bounds", ours, srv(`{"command": "x", "idleTimeout": 10080}`), want{}},
		{"idleTimeout exponent", ours, srv(`{"command": "x", "idleTimeout": 1e1}`), want{}},
		{"requestTimeoutMs zero", ours, srv(`{"command": "x", "requestTimeoutMs": 0}`), errAt("mcpServers.s.requestTimeoutMs", "from 1 to 86400000")},
		{"requestTimeoutMs over a day", ours, srv(`{"command": "x", "requestTimeoutMs": 86400001}`), errAt("mcpServers.s.requestTimeoutMs", "from 1 to 86400000")},
		{"requestTimeoutMs bounds", ours, srv(`{"command": "x", "requestTimeoutMs": 86400000}`), want{}},
		{"maxAttempts zero", ours, srv(`{"command": "x", "reconnect": {"maxAttempts": 0}}`), errAt("mcpServers.s.reconnect.maxAttempts", "from 1 to 5")},
		{"maxAttempts six", ours, srv(`{"command": "x", "reconnect": {"maxAttempts": 6}}`), errAt("mcpServers.s.reconnect.maxAttempts", "from 1 to 5")},
		{"baseDelayMs zero", ours, srv(`{"command": "x", "reconnect": {"baseDelayMs": 0}}`), errAt("mcpServers.s.reconnect.baseDelayMs", "from 1 to 60000")},
		{"baseDelayMs over a minute", ours, srv(`{"command": "x", "reconnect": {"baseDelayMs": 60001}}`), errAt("mcpServers.s.reconnect.baseDelayMs", "from 1 to 60000")},
		{"automatic number", ours, srv(`{"command": "x", "reconnect": {"automatic": 1}}`), errAt("mcpServers.s.reconnect.automatic", "must be true or false")},
		{"reconnect unknown field, shared too", shared, srv(`{"command": "x", "reconnect": {"retries": 3}}`), errAt("mcpServers.s.reconnect", `unknown field "retries"`)},
		{"protocolVersion word", ours, srv(`{"command": "x", "protocolVersion": "newest"}`), errAt("mcpServers.s.protocolVersion", `must be "auto", "latest", "legacy" or a revision such as "2025-11-25", not "newest"`)},
		{"protocolVersion latest", ours, srv(`{"command": "x", "protocolVersion": "latest"}`), want{}},
		{"protocolVersion short date", ours, srv(`{"command": "x", "protocolVersion": "2025-6-18"}`), errAt("mcpServers.s.protocolVersion", `not "2025-6-18"`)},
		{"protocolVersion revision", ours, srv(`{"command": "x", "protocolVersion": "2025-06-18"}`), want{}},
		{"protocolVersion unknown revision", ours, srv(`{"command": "x", "protocolVersion": "2030-01-01"}`), errAt("mcpServers.s.protocolVersion", `"2030-01-01" is not a protocol revision Switchboard speaks (it speaks 2026-07-28, 2025-11-25`)},
		{"protocolVersion legacy", ours, srv(`{"command": "x", "protocolVersion": "legacy"}`), want{}},
		{"redirects same-origin", ours, srv(`{"url": "https://h/mcp", "redirects": "same-origin"}`), want{}},
		{"redirects follow-without-credentials", ours, srv(`{"url": "https://h/mcp", "redirects": "follow-without-credentials"}`), want{}},
		{"redirects follow", ours, srv(`{"url": "https://h/mcp", "redirects": "follow"}`), errAt("mcpServers.s.redirects", `must be "same-origin" (the default: a redirect to another origin fails) or "follow-without-credentials" (follow it without the server's headers and token), not "follow"`)},
		{"approve with approvers", ours, srv(`{"url": "https://h/mcp", "approve": {"when": ["delete_*"], "approvers": ["leads"]}}`), want{}},
		{"approve object without approvers", ours, srv(`{"url": "https://h/mcp", "approve": {"when": "always"}}`), errAt("mcpServers.s.approve", `needs "when"`)},
		{"approve object empty approvers", ours, srv(`{"url": "https://h/mcp", "approve": {"when": "always", "approvers": []}}`), errAt("mcpServers.s.approve.approvers", "must name at least one group")},
		{"approve object unknown field", ours, srv(`{"url": "https://h/mcp", "approve": {"when": "always", "approvers": ["a"], "by": 1}}`), errAt("mcpServers.s.approve.by", `unknown field "by"`)},
		{"perUser", ours, srv(`{"url": "https://h/mcp", "perUser": false}`), want{}},
		{"perUser a string", ours, srv(`{"url": "https://h/mcp", "perUser": "yes"}`), errAt("mcpServers.s.perUser", "must be true or false")},
		{"perUser of a stdio server", ours, srv(`{"command": "x", "perUser": true}`), errAt("mcpServers.s.perUser", `"perUser" belongs to HTTP servers that log in with OAuth: a stdio server has no upstream login`)},
		{"redirects of a stdio server", ours, srv(`{"command": "x", "redirects": "same-origin"}`), errAt("mcpServers.s.redirects", `"redirects" belongs to HTTP servers: a stdio server makes no HTTP requests`)},

		// Settings (only in our files).
		{"toolPrefix", ours, `{"settings": {"toolPrefix": "long"}}`, errAt("settings.toolPrefix", `not "long"`)},
		{"settings idleTimeout", ours, `{"settings": {"idleTimeout": -5}}`, errAt("settings.idleTimeout", "from 0 to 10080")},
		{"settings requestTimeoutMs", ours, `{"settings": {"requestTimeoutMs": 0}}`, errAt("settings.requestTimeoutMs", "from 1 to 86400000")},
		{"maxBytes too small", ours, `{"settings": {"output": {"maxBytes": 10}}}`, errAt("settings.output.maxBytes", "from 1024 to 67108864")},
		{"maxLines too small", ours, `{"settings": {"output": {"maxLines": 5}}}`, errAt("settings.output.maxLines", "from 10 to 1000000")},
		{"output unknown field", ours, `{"settings": {"output": {"max": 5}}}`, errAt("settings.output", `unknown field "max"`)},
		{"settings directTools", ours, `{"settings": {"directTools": "yes"}}`, errAt("settings.directTools", "must be true or false")},
		{"settings unknown field", ours, `{"settings": {"prefix": "none"}}`, errAt("settings", `unknown field "prefix"`)},
		{"credentialStore keychain", ours, `{"settings": {"credentialStore": "keychain"}}`, want{}},
		{"credentialStore file", ours, `{"settings": {"credentialStore": "file"}}`, want{}},
		{"credentialStore encrypted-file", ours, `{"settings": {"credentialStore": "encrypted-file"}}`, want{}},
		{"credentialStore encrypted-file with its key", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${MY_KEY}"}}`, want{}},
		{"credentialStoreKey $env:", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "$env:MY_KEY"}}`, want{}},
		{"credentialStoreKey cmd", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${cmd:pass show switchboard}"}}`, want{}},
		{"credentialStoreKey !command", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "!pass show switchboard"}}`, want{}},
		{"credentialStoreKey literal", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "c2stY2FuYXJ5"}}`, errAt("settings.credentialStoreKey", `must be one reference to the key: a variable ("${SWITCHBOARD_CREDENTIAL_KEY}")`)},
		{"credentialStoreKey two references", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${A}${B}"}}`, errAt("settings.credentialStoreKey", "must be one reference")},
		{"credentialStoreKey secret", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${secret:K}"}}`, errAt("settings.credentialStoreKey", "must be one reference")},
		{"credentialStoreKey default", ours, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${K:-c2stY2FuYXJ5}"}}`, errAt("settings.credentialStoreKey", "must be one reference")},
		{"credentialStoreKey with another store", ours, `{"settings": {"credentialStore": "file", "credentialStoreKey": "${K}"}}`, errAt("settings.credentialStoreKey", `is the key of the encrypted file store, and credentialStore is "file"`)},
		{"credentialStore in a project", KindProject, `{"settings": {"credentialStore": "file"}}`, errAt("settings.credentialStore", "belongs in your own configuration file, not a project's")},
		{"credentialStoreKey in a project", KindProject, `{"settings": {"credentialStoreKey": "${K}"}}`, errAt("settings.credentialStoreKey", "not a project's")},
		{"credentialStore other", ours, `{"settings": {"credentialStore": "vault"}}`, errAt("settings.credentialStore", `must be "keychain" (the OS keychain), "encrypted-file" (files encrypted with settings.credentialStoreKey) or "file" (unencrypted files), not "vault"`)},
		{"credentialStore empty", ours, `{"settings": {"credentialStore": ""}}`, errAt("settings.credentialStore", `not ""; leave it out for the default`)},
		{"credentialStore number", ours, `{"settings": {"credentialStore": 1}}`, errAt("settings.credentialStore", "must be a string")},
		{"settings not an object", ours, `{"settings": []}`, errAt("settings", "must be an object")},
		{"unknown import", ours, `{"imports": ["emacs"]}`, errAt("imports[0]", `unknown host "emacs"`)},
		{"unknown settings import", ours, `{"settings": {"imports": ["claude-code", "emacs"]}}`, errAt("settings.imports[1]", `unknown host "emacs"`)},
		{"embeddings without baseUrl", ours, `{"settings": {"embeddings": {"model": "m"}}}`, errAt("settings.embeddings", `needs "baseUrl"`)},
		{"embeddings literal apiKey", ours, `{"settings": {"embeddings": {"baseUrl": "http://h/v1", "apiKey": "sk-canary"}}}`, errAt("settings.embeddings.apiKey", "must be a reference")},
		{"embeddings unknown field", ours, `{"settings": {"embeddings": {"baseUrl": "http://h/v1", "key": "x"}}}`, errAt("settings.embeddings", `unknown field "key"`)},
		{"embeddings", ours, `{"settings": {"embeddings": {"baseUrl": "${EMB_URL:-http://127.0.0.1:11434/v1}", "apiKey": "${OPENAI_API_KEY}", "model": "m"}}}`, want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems, fatal := decode(tt.kind, tt.text)
			if tt.want.sev == "" {
				if len(problems) > 0 || fatal {
					t.Fatalf("got problems %v (fatal %v), want none", problems, fatal)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("got %d problems %v, want 1", len(problems), problems)
			}
			p := problems[0]
			if p.Severity != tt.want.sev || p.Path != tt.want.path || !strings.Contains(p.Message, tt.want.message) {
				t.Errorf("got %s %q at %q, want %s containing %q at %q", p.Severity, p.Message, p.Path, tt.want.sev, tt.want.message, tt.want.path)
			}
			if fatal != tt.want.fatal {
				t.Errorf("fatal: got %v, want %v", fatal, tt.want.fatal)
			}
			if p.Server != serverOf(tt.want.path) {
				t.Errorf("server: got %q, want %q", p.Server, serverOf(tt.want.path))
			}
			if p.File != "/cfg/"+string(tt.kind)+".json" || p.Line == 0 || p.Col == 0 {
				t.Errorf("got position %s:%d:%d, want the file with a line and a column", p.File, p.Line, p.Col)
			}
			if strings.Contains(p.Error(), "canary") {
				t.Errorf("got %q, want the literal value left out", p.Error())
			}
		})
	}
}

func TestDecodeServer(t *testing.T) {
	src := Source{Kind: KindUser, Path: "/cfg/config.json"}
	text := `{"mcpServers": {
		"full": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "server", "${NOT_EXPANDED}"],
			"cwd": "/work",
			"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1"},
			"lifecycle": "keep-alive",
			"idleTimeout": 0,
			"requestTimeoutMs": 1500,
			"reconnect": {"automatic": true, "maxAttempts": 5, "baseDelayMs": 250},
			"disabled": false,
			"includeTools": ["get_*"],
			"excludeTools": ["get_secret"],
			"directTools": ["search"],
			"searchKeywords": {"get_*": ["fetch"]},
			"protocolVersion": "2025-06-18"
		},
		"web": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}, "reconnect": {}, "directTools": false}
	}}`
	doc, problems, fatal := decodeFile(src, []byte(text))
	if fatal || doc == nil {
		t.Fatalf("got problems %v, want none", problems)
	}
	want := []*Server{
		{
			Name: "full", Source: src, Path: "mcpServers.full",
			Type: TransportStdio, Command: "npx", Args: []string{"-y", "server", "${NOT_EXPANDED}"}, Cwd: "/work",
			Env:       map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1"},
			Lifecycle: LifecycleKeepAlive, IdleTimeout: 0, RequestTimeout: 1500 * time.Millisecond,
			Reconnect:    Reconnect{Automatic: true, MaxAttempts: 5, BaseDelay: 250 * time.Millisecond},
			IncludeTools: []string{"get_*"}, ExcludeTools: []string{"get_secret"},
			DirectTools:     DirectTools{Names: []string{"search"}},
			SearchKeywords:  map[string][]string{"get_*": {"fetch"}},
			ProtocolVersion: "2025-06-18",
			directSet:       true,
			idleSet:         true,
			line:            2, col: 11,
		},
		{
			Name: "web", Source: src, Path: "mcpServers.web",
			Type: TransportHTTP, TypeInferred: true, URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"},
			Lifecycle: LifecycleLazy, IdleTimeout: -1, // -1: from settings, filled by Load
			Reconnect:       Reconnect{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond},
			ProtocolVersion: "auto",
			directSet:       true,
			line:            19, col: 10,
		},
	}
	if diff := cmp.Diff(want, doc.servers, cmp.AllowUnexported(Server{})); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	// The reference in args is passed literally, with a warning.
	if len(problems) != 1 || problems[0].Severity != SeverityWarning || problems[0].Path != "mcpServers.full.args" ||
		!strings.Contains(problems[0].Message, "passed literally") {
		t.Errorf("got problems %v, want one warning that args are literal", problems)
	}
}

func TestTransportInference(t *testing.T) {
	tests := []struct {
		body string
		want Transport
	}{
		{`{"command": "x"}`, TransportStdio},
		{`{"url": "https://h/mcp"}`, TransportHTTP},
		{`{"type": "stdio", "command": "x"}`, TransportStdio},
		{`{"type": "STDIO", "command": "x"}`, TransportStdio},
		{`{"type": "http", "url": "https://h/mcp"}`, TransportHTTP},
		{`{"type": "streamable-http", "url": "https://h/mcp"}`, TransportHTTP},
		{`{"type": "streamableHttp", "url": "https://h/mcp"}`, TransportHTTP},
		{`{"type": "streamable_http", "url": "https://h/mcp"}`, TransportHTTP},
		{`{"type": "sse", "url": "https://h/sse"}`, TransportSSE},
		{`{"type": "SSE", "url": "https://h/sse"}`, TransportSSE},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			for _, kind := range []Kind{KindUser, KindShared} {
				doc, problems, _ := decode(kind, srv(tt.body))
				if len(problems) > 0 || doc == nil || len(doc.servers) != 1 {
					t.Fatalf("%s: got problems %v, want none", kind, problems)
				}
				if got := doc.servers[0].Type; got != tt.want {
					t.Errorf("%s: got type %q, want %q", kind, got, tt.want)
				}
			}
		})
	}
}

func TestTolerantValues(t *testing.T) {
	doc, problems, _ := decode(KindShared, srv(`{"command": "x", "env": {"PORT": 8080, "DEBUG": true, "RATIO": 0.5}}`))
	if len(problems) > 0 {
		t.Fatalf("got problems %v, want none", problems)
	}
	want := map[string]string{"PORT": "8080", "DEBUG": "true", "RATIO": "0.5"}
	if diff := cmp.Diff(want, doc.servers[0].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	// A duplicate in a shared file warns and the last one counts.
	doc, _, fatal := decode(KindShared, srv(`{"command": "first", "command": "last"}`))
	if fatal || doc.servers[0].Command != "last" {
		t.Errorf("duplicate: got command %q (fatal %v), want last (not fatal)", doc.servers[0].Command, fatal)
	}
	// Top-level fields of shared files belong to their hosts: never errors.
	doc, problems, fatal = decode(KindShared, `{"mcpServers": {}, "inputs": [], "settings": {"toolPrefix": "none"}}`)
	if fatal || doc.settings != nil || len(problemList(problems).errors()) > 0 {
		t.Errorf("shared top level: got settings %v, problems %v, want settings ignored and no error", doc.settings, problems)
	}
}

// problemList filters problems.
type problemList []Problem

func (ps problemList) errors() []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}

func TestProblemPosition(t *testing.T) {
	tests := []struct {
		name, text string
		line, col  int
		message    string
	}{
		{
			name: "unknown field",
			text: "{\n  \"mcpServers\": {\n    \"s\": {\n      \"command\": \"x\",\n      \"bogus\": 1\n    }\n  }\n}\n",
			line: 5, col: 16, message: `mcpServers.s: unknown field "bogus"`,
		},
		{
			name: "credential literal points at its value",
			text: "{\"mcpServers\": {\"s\": {\n  \"command\": \"x\",\n  \"env\": {\n    \"A\": \"1\",\n    \"API_TOKEN\": \"abc\"\n  }\n}}}",
			line: 5, col: 18, message: "mcpServers.s.env.API_TOKEN: API_TOKEN looks like a credential",
		},
		{
			name: "syntax error",
			text: "{\n  \"mcpServers\": {\n    \"s\" {}\n  }\n}",
			line: 3, col: 9, message: "invalid JSON: invalid character '{' after object name",
		},
		{
			name: "unterminated",
			text: "{\n  \"mcpServers\": {\n",
			line: 3, col: 1, message: "invalid JSON:",
		},
		{
			name: "line comment at the end of the last line",
			text: "{\"mcpServers\": {}} // fine\n{",
			line: 2, col: 1, message: "invalid JSON:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems, _ := decode(KindUser, tt.text)
			errs := problemList(problems).errors()
			if len(errs) != 1 {
				t.Fatalf("got errors %v, want one", errs)
			}
			p := errs[0]
			if p.Line != tt.line || p.Col != tt.col || !strings.Contains(p.Error(), tt.message) {
				t.Errorf("got %q at %d:%d, want %q at %d:%d", p.Error(), p.Line, p.Col, tt.message, tt.line, tt.col)
			}
			if want := fmt.Sprintf("/cfg/user.json:%d:%d: ", tt.line, tt.col); !strings.HasPrefix(p.Error(), want) {
				t.Errorf("got %q, want it to start with %q", p.Error(), want)
			}
		})
	}
}

func TestSyntaxErrorHidesStrings(t *testing.T) {
	// A token pasted with a line break inside its quotes is invalid JSON;
	// the error must not quote it.
	for _, text := range []string{
		"{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"GITHUB_TOKEN\": \"ghp_canary\n\"}}}}",
		"{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"GITHUB_TOKEN\": \"ghp_canary\t\"}}}}",
		"{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"GITHUB_TOKEN\": \"ghp_canary\\q\"}}}}",
	} {
		_, problems, fatal := decode(KindUser, text)
		if !fatal || len(problems) != 1 {
			t.Fatalf("got problems %v, want one error", problems)
		}
		if msg := problems[0].Error(); strings.Contains(msg, "canary") || !strings.Contains(msg, "invalid string") {
			t.Errorf("got %q, want an invalid string error without the text", msg)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	// The parser recurses per level: without a bound, a few megabytes of
	// '[' overflow the stack and kill the process.
	deep := strings.Repeat("[", maxFileSize-1)
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"arrays", deep, false},
		{"objects", strings.Repeat(`{"a":`, 200_000), false},
		{"inside a server", srv(`{"command": "x", "autoApprove": ` + strings.Repeat("[", jsonc.MaxDepth) + strings.Repeat("]", jsonc.MaxDepth) + `}`), false},
		{"at the bound", strings.Repeat("[", jsonc.MaxDepth-1) + strings.Repeat("]", jsonc.MaxDepth-1), true},
		{"brackets in strings and comments do not count", `{"mcpServers": {}, "$schema": "` + strings.Repeat("[", 2000) + `"} // ` + strings.Repeat("{", 2000) + "\n/* " + strings.Repeat("[", 2000) + " */", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems, fatal := decode(KindShared, tt.text)
			deepErr := false
			for _, p := range problems {
				deepErr = deepErr || strings.Contains(p.Message, "nest deeper than")
			}
			if tt.ok && deepErr {
				t.Errorf("got %v, want no nesting error", problems)
			}
			if !tt.ok && (!fatal || !deepErr) {
				t.Errorf("got %v, want a nesting error", problems)
			}
		})
	}
}

func TestJSONC(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `// Switchboard
{
	/* servers */
	"mcpServers": {
		"a": {
			"command": "npx", // the runner
			"args": ["-y", "pkg",],
		},
		"b": {"url": "https://h/mcp",},
	},
	"settings": {"toolPrefix": "short",},
}
`)
	c := Load(d)
	noErrors(t, c)
	if got := mustServer(t, c, "a").Args; !cmp.Equal(got, []string{"-y", "pkg"}) {
		t.Errorf("args: got %v, want [-y pkg]", got)
	}
	if got := c.Settings.ToolPrefix; got != "short" {
		t.Errorf("toolPrefix: got %q, want short", got)
	}
	if got := mustServer(t, c, "b").URL; got != "https://h/mcp" {
		t.Errorf("url: got %q", got)
	}
}

func TestFailClosed(t *testing.T) {
	// good is a valid server in another file: it must be unusable while a
	// file that counts is broken, since that file might have disabled it.
	broken := map[string]string{
		"syntax": "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\"}\n  \n}\n",
		"schema": "{\"mcpServers\": [\"x\"]}",
	}
	tests := []struct {
		name  string
		file  func(p paths) string
		trust bool
		good  func(p paths) string
	}{
		{"shared", func(p paths) string { return p.shared }, false, func(p paths) string { return p.user }},
		{"agents", func(p paths) string { return p.agents }, false, func(p paths) string { return p.user }},
		{"agents nested", func(p paths) string { return p.agentsNested }, false, func(p paths) string { return p.user }},
		{"user", func(p paths) string { return p.user }, false, func(p paths) string { return p.shared }},
		{"trusted project shared", func(p paths) string { return p.projectShared }, true, func(p paths) string { return p.user }},
		{"trusted project", func(p paths) string { return p.project }, true, func(p paths) string { return p.user }},
		{"explicit", func(p paths) string { return p.explicit }, false, func(p paths) string { return p.user }},
	}
	for _, tt := range tests {
		for how, text := range broken {
			t.Run(tt.name+" "+how, func(t *testing.T) {
				d := newDirs(t)
				p := pathsOf(d)
				writeFile(t, tt.good(p), `{"mcpServers": {"good": {"command": "good"}}}`)
				writeFile(t, tt.file(p), text)
				if tt.trust {
					trust(t, d) // trusted for exactly this (broken) content
				}
				c := Load(d)
				if !errors.Is(c.Err(), ErrInvalid) {
					t.Fatalf("Err: got %v, want ErrInvalid", c.Err())
				}
				errs := c.Errors()
				if len(errs) != 1 {
					t.Fatalf("got errors %v, want one", errs)
				}
				if e := errs[0]; e.File != tt.file(p) || e.Line == 0 || e.Col == 0 {
					t.Errorf("got error %q, want one naming %s with line and column", e.Error(), tt.file(p))
				}
				if !strings.Contains(c.Err().Error(), errs[0].Error()) {
					t.Errorf("Err: got %q, want it to carry %q", c.Err(), errs[0].Error())
				}
				if _, err := c.Usable("good"); !errors.Is(err, ErrInvalid) {
					t.Errorf("Usable(good): got %v, want ErrInvalid", err)
				}
				for _, f := range c.Files {
					if f.Path == tt.file(p) && f.State != FileInvalid {
						t.Errorf("file state: got %s, want %s", f.State, FileInvalid)
					}
				}
				if _, ok := c.Server("good"); !ok {
					t.Errorf("Server(good): got none, want the definition still listed for status")
				}
			})
		}
	}
}

// An error in one server's entry makes that server invalid and leaves the
// others working, as a literal credential does; the invalid entry still
// overrides what a lower file defines under its name, so that a broken
// override never brings back what it replaced (issue 30).
func TestServerErrorIsScoped(t *testing.T) {
	entries := map[string]string{
		"unknown approve": `{"command": "x", "approve": "sometimes"}`,
		"unknown field":   `{"command": "x", "comand": "y"}`,
		"bad lifecycle":   `{"command": "x", "lifecycle": "never"}`,
		"wrong type":      `{"command": 1}`,
		"not an object":   `"npx"`,
		"no command":      `{"args": ["x"]}`,
		"bad reference":   `{"command": "x", "env": {"A": "${A"}}`,
		"bad pattern":     `{"command": "x", "includeTools": "a*"}`,
	}
	for name, entry := range entries {
		t.Run(name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.shared, `{"mcpServers": {"bad": {"command": "lower"}}}`)
			writeFile(t, p.user, `{"mcpServers": {"good": {"command": "good"}, "bad": `+entry+`}}`)
			c := Load(d)
			if c.Err() != nil {
				t.Fatalf("Err: got %v, want nil: the error is one server's", c.Err())
			}
			if _, err := c.Usable("good"); err != nil {
				t.Errorf("Usable(good): got %v, want usable", err)
			}
			s, err := c.Usable("bad")
			if err == nil || !strings.Contains(err.Error(), `server "bad"`) || !strings.Contains(err.Error(), p.user) {
				t.Errorf("Usable(bad): got %v, %v; want the entry's error, naming the server and the file", s, err)
			}
			if s, ok := c.Server("bad"); !ok || s.Source.Path != p.user || s.Command == "lower" {
				t.Errorf("Server(bad): got %+v, want the invalid entry of %s, not the lower definition", s, p.user)
			}
			if errs := c.Errors(); len(errs) == 0 || errs[0].Server != "bad" {
				t.Errorf("Errors: got %v, want the entry's error, naming the server", errs)
			}
			for _, f := range c.Files {
				if f.Path == p.user && f.State != FileLoaded {
					t.Errorf("file state: got %s, want %s", f.State, FileLoaded)
				}
			}
		})
	}
}

func TestUntrustedBrokenProject(t *testing.T) {
	// An ignored project file cannot disable anything, so it cannot fail
	// the configuration closed: its problems are warnings.
	tests := []struct {
		name  string
		write func(t *testing.T, p paths)
	}{
		{"syntax", func(t *testing.T, p paths) { writeFile(t, p.projectShared, `{"mcpServers": {`) }},
		{"schema", func(t *testing.T, p paths) {
			writeFile(t, p.project, `{"mcpServers": {"x": {"command": "x"}}, "servers": {}}`)
		}},
		{"unreadable", func(t *testing.T, p paths) {
			if err := os.MkdirAll(p.projectShared, 0o755); err != nil { // a directory where the file should be
				t.Fatal(err)
			}
		}},
		{"too large", func(t *testing.T, p paths) {
			writeFile(t, p.project, `{"mcpServers": {}, "$schema": "`+strings.Repeat("x", maxFileSize)+`"}`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, `{"mcpServers": {"good": {"command": "good"}}}`)
			tt.write(t, p)
			c := Load(d)
			noErrors(t, c)
			if _, err := c.Usable("good"); err != nil {
				t.Errorf("Usable(good): got %v, want usable", err)
			}
			if c.Project.Trusted || len(c.Project.Files) != 1 {
				t.Errorf("project: got trusted %v, files %v, want one untrusted file", c.Project.Trusted, c.Project.Files)
			}
			for _, f := range c.Files {
				if f.InProject() && f.State != FileMissing && f.State != FileIgnored {
					t.Errorf("%s: got state %s, want %s", f.Path, f.State, FileIgnored)
				}
			}
			if !strings.Contains(problemText(c.Warnings()), "(in an ignored file)") {
				t.Errorf("warnings: got %v, want the file's problem as a warning", c.Warnings())
			}

			// Once trusted as it is, it fails closed.
			trust(t, d)
			if c := Load(d); !errors.Is(c.Err(), ErrInvalid) {
				t.Errorf("trusted: got Err %v, want ErrInvalid", c.Err())
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	tests := []struct {
		name    string
		write   func(t *testing.T, path string)
		message string
	}{
		{"directory", func(t *testing.T, path string) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"too large", func(t *testing.T, path string) {
			writeFile(t, path, strings.Repeat(" ", maxFileSize+1))
		}, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			tt.write(t, p.shared)
			writeFile(t, p.user, `{"mcpServers": {"good": {"command": "good"}}}`)
			c := Load(d)
			if !errors.Is(c.Err(), ErrInvalid) || !strings.Contains(c.Err().Error(), tt.message) {
				t.Errorf("Err: got %v, want ErrInvalid naming %q", c.Err(), tt.message)
			}
			if _, err := c.Usable("good"); !errors.Is(err, ErrInvalid) {
				t.Errorf("Usable: got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	embed := &Embeddings{BaseURL: "http://127.0.0.1:11434/v1", APIKey: "${OPENAI_API_KEY}", Model: "nomic"}
	tests := []struct {
		name  string
		trust bool
		want  Settings
	}{
		{
			name:  "user, trusted project and explicit",
			trust: true,
			want: Settings{
				ToolPrefix: "none", IdleTimeout: 5 * time.Minute, RequestTimeout: 1500 * time.Millisecond,
				Output: Output{MaxBytes: 2048, MaxLines: 100}, DirectTools: true, Embeddings: embed, CredentialStore: "file",
			},
		},
		{
			name: "untrusted project settings do not count",
			want: Settings{
				ToolPrefix: "none", IdleTimeout: 5 * time.Minute, RequestTimeout: DefaultRequestTimeout,
				Output: Output{MaxBytes: 2048, MaxLines: DefaultOutputLines}, DirectTools: true, Embeddings: embed, CredentialStore: "file",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.shared, `{"settings": {"toolPrefix": "short", "output": {"maxLines": 11}}}`) // not ours: ignored
			writeFile(t, p.user, `{"settings": {"toolPrefix": "short", "idleTimeout": 5, "output": {"maxBytes": 2048}, "credentialStore": "file"}}`)
			writeFile(t, p.project, `{"settings": {"requestTimeoutMs": 1500, "output": {"maxLines": 100}, "toolPrefix": "server"}}`)
			writeFile(t, p.explicit, `{"settings": {"toolPrefix": "none", "directTools": true,
				"embeddings": {"baseUrl": "http://127.0.0.1:11434/v1", "apiKey": "${OPENAI_API_KEY}", "model": "nomic"}}}`)
			if tt.trust {
				trust(t, d)
			}
			c := Load(d)
			noErrors(t, c)
			if diff := cmp.Diff(tt.want, c.Settings); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}

	if got, want := Load(newDirs(t)).Settings, DefaultSettings(); !cmp.Equal(got, want) {
		t.Errorf("no files: got %+v, want %+v", got, want)
	}
}

func TestSettingsImports(t *testing.T) {
	// Import lists from our files are merged without duplicates (any case).
	// Only the list is checked here: the importers have tests of their own.
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"imports": ["cursor"], "settings": {"imports": ["vscode", "cursor"]}}`)
	writeFile(t, p.explicit, `{"imports": ["codex", "vscode"]}`)
	c := Load(d)
	if got, want := c.Settings.Imports, []string{"cursor", "vscode", "codex"}; !cmp.Equal(got, want) {
		t.Errorf("imports: got %v, want %v", got, want)
	}
	if c.Err() != nil {
		t.Errorf("Err: got %v, want nil: an import never fails the configuration", c.Err())
	}
}

func TestDefaultsFromSettings(t *testing.T) {
	servers := `{"mcpServers": {
		"plain": {"command": "x"},
		"own": {"command": "x", "idleTimeout": 0, "requestTimeoutMs": 20, "directTools": false},
		"list": {"command": "x", "directTools": ["search"]}
	}}`
	type got struct {
		Idle, Request time.Duration
		Direct        DirectTools
	}
	tests := []struct {
		name     string
		settings string
		want     map[string]got
	}{
		{
			name: "built-in defaults",
			want: map[string]got{
				"plain": {DefaultIdleTimeout, DefaultRequestTimeout, DirectTools{}},
				"own":   {0, 20 * time.Millisecond, DirectTools{}},
				"list":  {DefaultIdleTimeout, DefaultRequestTimeout, DirectTools{Names: []string{"search"}}},
			},
		},
		{
			name:     "from settings",
			settings: `{"settings": {"idleTimeout": 5, "requestTimeoutMs": 1000, "directTools": true}}`,
			want: map[string]got{
				"plain": {5 * time.Minute, time.Second, DirectTools{All: true}},
				"own":   {0, 20 * time.Millisecond, DirectTools{}},
				"list":  {5 * time.Minute, time.Second, DirectTools{Names: []string{"search"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.shared, servers) // settings apply to servers from any file
			if tt.settings != "" {
				writeFile(t, p.user, tt.settings)
			}
			c := Load(d)
			noErrors(t, c)
			for name, want := range tt.want {
				s := mustServer(t, c, name)
				if diff := cmp.Diff(want, got{s.IdleTimeout, s.RequestTimeout, s.DirectTools}); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
				if s.Lifecycle != LifecycleLazy || s.ProtocolVersion != "auto" {
					t.Errorf("%s: got lifecycle %q, protocol %q, want lazy, auto", name, s.Lifecycle, s.ProtocolVersion)
				}
			}
		})
	}
}

func TestTrust(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"mcpServers": {"u": {"command": "u"}}}`)
	writeFile(t, p.projectShared, "{\n  \"mcpServers\": {\n    \"p\": {\"command\": \"p\"}\n  }\n}\n")
	writeFile(t, p.project, `{"mcpServers": {"q": {"command": "q"}}}`)
	projectListing := listTree(t, d.Project)

	check := func(t *testing.T, trusted, changed bool, why string) {
		t.Helper()
		c := Load(d)
		noErrors(t, c)
		if c.Project.Trusted != trusted || c.Project.Changed != changed {
			t.Errorf("project: got trusted %v, changed %v, want %v, %v", c.Project.Trusted, c.Project.Changed, trusted, changed)
		}
		_, hasP := c.Server("p")
		_, hasQ := c.Server("q")
		if hasP != trusted || hasQ != trusted {
			t.Errorf("project servers: got p %v, q %v, want %v", hasP, hasQ, trusted)
		}
		mustServer(t, c, "u")
		var ignored []string
		for _, f := range c.Files {
			if f.State == FileIgnored {
				ignored = append(ignored, f.Path)
			}
		}
		warnings := problemText(c.Warnings())
		if trusted {
			if len(ignored) > 0 || strings.Contains(warnings, "ignored") {
				t.Errorf("got ignored files %v, warnings %q, want none", ignored, warnings)
			}
			return
		}
		if want := []string{p.projectShared, p.project}; !cmp.Equal(ignored, want) {
			t.Errorf("ignored files: got %v, want %v", ignored, want)
		}
		for _, path := range []string{p.projectShared, p.project} {
			if want := path + ": ignored: " + why + " (hint: review it, then run switchboard trust)"; !strings.Contains(warnings, want) {
				t.Errorf("warnings: got %q, want %q", warnings, want)
			}
		}
	}

	t.Run("untrusted", func(t *testing.T) {
		check(t, false, false, "the project is not trusted")
		c := Load(d)
		for _, f := range c.Files {
			if f.Path == p.projectShared && !cmp.Equal(f.Servers, []string{"p"}) {
				t.Errorf("ignored file servers: got %v, want [p] for status", f.Servers)
			}
		}
	})
	t.Run("trusted", func(t *testing.T) {
		c, err := Trust(d, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if c.Project.Hash == "" || !strings.HasPrefix(c.Project.Hash, "sha256:") {
			t.Errorf("Trust: got hash %q, want a sha256", c.Project.Hash)
		}
		check(t, true, false, "")
		if got := readString(t, filepath.Join(d.Home, ".local", "state", "switchboard", "trust.json")); !strings.Contains(got, c.Project.Hash) || !strings.Contains(got, d.Project) {
			t.Errorf("trust.json: got %s, want the project and its hash", got)
		}
		if diff := cmp.Diff(projectListing, listTree(t, d.Project)); diff != "" {
			t.Errorf("Trust wrote into the project (-before +after):\n%s", diff)
		}
	})
	t.Run("comments and formatting keep trust", func(t *testing.T) {
		writeFile(t, p.projectShared, "// reviewed\n{\"mcpServers\": {\n\t\"p\": {\"command\": \"p\",}, /* trailing */\n}}\n")
		check(t, true, false, "")
	})
	t.Run("a changed definition needs trust again", func(t *testing.T) {
		writeFile(t, p.projectShared, `{"mcpServers": {"p": {"command": "p", "args": ["--evil"]}}}`)
		check(t, false, true, "its server definitions changed since the project was trusted")
	})
	t.Run("trusted again", func(t *testing.T) {
		trust(t, d)
		check(t, true, false, "")
	})
	t.Run("a new project file needs trust again", func(t *testing.T) {
		if err := os.Remove(p.project); err != nil {
			t.Fatal(err)
		}
		trust(t, d)
		writeFile(t, p.project, `{"mcpServers": {"q": {"command": "q"}}}`)
		check(t, false, true, "its server definitions changed since the project was trusted")
	})
	t.Run("revoke", func(t *testing.T) {
		trust(t, d)
		was, err := Revoke(d)
		if err != nil || !was {
			t.Fatalf("Revoke: got %v, %v, want true, nil", was, err)
		}
		check(t, false, false, "the project is not trusted")
		if was, err := Revoke(d); err != nil || was {
			t.Errorf("Revoke again: got %v, %v, want false, nil", was, err)
		}
	})
	t.Run("state under StateHome", func(t *testing.T) {
		d := d
		d.StateHome = filepath.Join(d.Home, "state")
		check := Load(d)
		if check.Project.Trusted {
			t.Fatalf("got trusted with an empty state directory, want untrusted")
		}
		trust(t, d)
		if _, err := os.Stat(filepath.Join(d.Home, "state", "switchboard", "trust.json")); err != nil {
			t.Errorf("trust record: %v", err)
		}
	})
}

func TestTrustRecordCorrupt(t *testing.T) {
	// An unreadable record trusts nothing, and Trust starts it afresh.
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.projectShared, `{"mcpServers": {"p": {"command": "p"}}}`)
	writeFile(t, filepath.Join(d.Home, ".local", "state", "switchboard", "trust.json"), `{"projects": [`)
	if c := Load(d); c.Project.Trusted {
		t.Fatalf("got trusted with a corrupt record, want untrusted")
	}
	trust(t, d)
	if c := Load(d); !c.Project.Trusted {
		t.Errorf("got untrusted after Trust, want trusted")
	}
}

func TestTrustNoProject(t *testing.T) {
	d := newDirs(t)
	if _, err := Trust(d, time.Unix(0, 0)); !errors.Is(err, ErrNoProject) {
		t.Errorf("Trust: got %v, want ErrNoProject", err)
	}
	d.Project = ""
	if _, err := Trust(d, time.Unix(0, 0)); !errors.Is(err, ErrNoProject) {
		t.Errorf("Trust without a project: got %v, want ErrNoProject", err)
	}
}

// listTree lists the files under dir with their contents.
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOutputOff: "output": false turns the bound off; a higher file's
// object turns it on again; any other value is an error that says what
// the field takes.
func TestOutputOff(t *testing.T) {
	for _, tc := range []struct {
		name, user, explicit string
		unbounded            bool
		err                  string
	}{
		{"off", `{"settings": {"output": false}}`, "", true, ""},
		{"off, then bounded higher", `{"settings": {"output": false}}`, `{"settings": {"output": {"maxBytes": 4096}}}`, false, ""},
		{"true", `{"settings": {"output": true}}`, "", false, `must be an object such as {"maxBytes": 51200, "maxLines": 2000}, or false to turn the bound off, not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, tc.user)
			if tc.explicit != "" {
				writeFile(t, p.explicit, tc.explicit)
			}
			c := Load(d)
			if tc.err != "" {
				if !strings.Contains(problemText(c.Errors()), tc.err) {
					t.Errorf("errors: %s, want %q", problemText(c.Errors()), tc.err)
				}
				return
			}
			noErrors(t, c)
			if c.Settings.Output.Unbounded != tc.unbounded {
				t.Errorf("Unbounded = %v, want %v", c.Settings.Output.Unbounded, tc.unbounded)
			}
			if b, l := c.Settings.Output.Limits(); tc.unbounded && (b != math.MaxInt || l != math.MaxInt) {
				t.Errorf("Limits() = %d, %d; want no bound", b, l)
			}
		})
	}
}

// TestStrictAndAllowList: terret-mcp's policy. settings.strict leaves out
// every server not defined in Switchboard's own files, with a warning;
// settings.includeTools is an allow list across servers, written
// mcp__SERVER__GLOB, that denies what it does not match (a server it does
// not name has no tool); a server's own includeTools and excludeTools take
// mcp__SERVER__GLOB too. The allow list is part of the definition's hash,
// so a cached listing made under another list is not used.
func TestStrictAndAllowList(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.shared, `{"mcpServers": {"ambient": {"command": "a"}}}`)
	writeFile(t, p.user, `{"mcpServers": {
  "gh": {"command": "gh", "excludeTools": ["mcp__gh__delete_*", "mcp__other__x"]},
  "fs": {"command": "fs"},
  "quiet": {"command": "q"}
}, "settings": {"strict": true, "includeTools": ["mcp__gh__*", "mcp__fs__read_*"]}}`)
	c := Load(d)
	noErrors(t, c)
	if _, ok := c.Server("ambient"); ok {
		t.Error("strict: a server of the shared file is used")
	}
	warnings := problemText(c.Warnings())
	for _, want := range []string{`server "ambient" is not used: settings.strict`, `"mcp__other__x" names server "other", not "gh"`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	gh, fs, quiet := mustServer(t, c, "gh"), mustServer(t, c, "fs"), mustServer(t, c, "quiet")
	for _, tc := range []struct {
		s    *Server
		tool string
		want bool
	}{
		{gh, "get_issue", true},
		{gh, "delete_repo", false}, // its own excludeTools, written mcp__gh__delete_*
		{fs, "read_file", true},
		{fs, "write_file", false},  // not in the allow list
		{quiet, "anything", false}, // not named: deny by default
	} {
		if got := tc.s.ToolAllowed(tc.tool); got != tc.want {
			t.Errorf("%s: ToolAllowed(%s) = %v, want %v", tc.s.Name, tc.tool, got, tc.want)
		}
	}
	h := fs.Hash()
	writeFile(t, p.user, `{"mcpServers": {"fs": {"command": "fs"}}, "settings": {"includeTools": ["mcp__fs__*"]}}`)
	if Load(d).Servers[0].Hash() == h {
		t.Error("another allow list, the same definition hash: a cached listing would be used")
	}

	for _, bad := range []string{`["github__*"]`, `["mcp__*__x"]`, `["mcp__gh"]`} {
		writeFile(t, p.user, `{"settings": {"includeTools": `+bad+`}}`)
		if errs := problemText(Load(d).Errors()); !strings.Contains(errs, "must name a server and a glob of its tools as mcp__SERVER__GLOB") {
			t.Errorf("includeTools %s: errors %q", bad, errs)
		}
	}
}

// TestToolPrefixes: "mcp" is a toolPrefix, in settings and per server, and
// settings.freezeDirectTools is read; another value is an error naming the
// four.
func TestToolPrefixes(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	writeFile(t, d.UserFile(), `{"settings": {"toolPrefix": "mcp", "freezeDirectTools": true},
		"mcpServers": {"a": {"command": "a", "toolPrefix": "short"}, "b": {"command": "b", "toolPrefix": "camel"}}}`)
	cfg := Load(d)
	if cfg.Settings.ToolPrefix != "mcp" || !cfg.Settings.FreezeDirectTools {
		t.Errorf("settings: toolPrefix %q, freezeDirectTools %v", cfg.Settings.ToolPrefix, cfg.Settings.FreezeDirectTools)
	}
	if a, ok := cfg.Server("a"); !ok || a.ToolPrefix != "short" {
		t.Errorf("a's toolPrefix: %+v", a)
	}
	var found bool
	for _, p := range cfg.Problems {
		if p.Path == "mcpServers.b.toolPrefix" && strings.Contains(p.Message, `"server", "short", "none" or "mcp", not "camel"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no problem for b's toolPrefix among %+v", cfg.Problems)
	}
}

// TestBearerTokenField: bearerToken is the Authorization header it stands
// for, a reference in each of the forms references take; a literal, a
// stdio server's and one beside an Authorization header are errors.
func TestBearerTokenField(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	writeFile(t, d.UserFile(), `{"mcpServers": {
		"a": {"url": "https://a.example/mcp", "bearerToken": "${A_TOKEN}"},
		"b": {"url": "https://b.example/mcp", "bearerToken": "!pass show b"},
		"c": {"url": "https://c.example/mcp", "bearerToken": "$env:C_TOKEN"},
		"d": {"url": "https://d.example/mcp", "bearerToken": "ghp_0123456789abcdefghij0123456789abcd"},
		"e": {"command": "e", "bearerToken": "${E}"},
		"f": {"url": "https://f.example/mcp", "bearerToken": "${F}", "headers": {"authorization": "Bearer ${G}"}}}}`)
	cfg := Load(d)
	for name, want := range map[string]string{"a": "Bearer ${A_TOKEN}", "b": "Bearer ${cmd:pass show b}", "c": "Bearer ${C_TOKEN}"} {
		if s, ok := cfg.Server(name); !ok || s.Headers["Authorization"] != want {
			t.Errorf("%s: headers %v, want Authorization %q", name, s.Headers, want)
		}
	}
	problems := map[string]string{}
	for _, p := range cfg.Problems {
		problems[p.Path] += p.Message
	}
	for path, want := range map[string]string{
		"mcpServers.d.bearerToken": "must be a reference",
		"mcpServers.e.bearerToken": "belongs to HTTP servers",
		"mcpServers.f.bearerToken": "keep one",
	} {
		if !strings.Contains(problems[path], want) {
			t.Errorf("%s: %q, want %q", path, problems[path], want)
		}
	}
	if s, _ := cfg.Server("d"); s != nil && strings.Contains(fmt.Sprint(s.Headers), "ghp_") {
		t.Error("the literal token is kept")
	}
	for _, p := range cfg.Problems {
		if strings.Contains(p.Message, "ghp_") {
			t.Error("a problem shows the literal token")
		}
	}
}

// TestSocketServer: "socket" makes a server of type socket, "~/" is the
// home directory, a relative path and another transport's fields are
// errors.
func TestSocketServer(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	writeFile(t, d.UserFile(), `{"mcpServers": {
		"a": {"socket": "/run/mux/a.sock"},
		"b": {"type": "socket", "socket": "~/mux/b.sock"},
		"c": {"socket": "mux.sock"},
		"d": {"socket": "/run/d.sock", "command": "x"},
		"e": {"type": "socket"},
		"f": {"type": "http", "socket": "/run/f.sock"}}}`)
	cfg := Load(d)
	if a, ok := cfg.Server("a"); !ok || a.Type != TransportSocket || a.Socket != "/run/mux/a.sock" || a.Target() != "unix:/run/mux/a.sock" {
		t.Errorf("a: %+v", a)
	}
	if b, ok := cfg.Server("b"); !ok || b.Socket != filepath.Join(d.Home, "mux/b.sock") {
		t.Errorf("b: %+v", b)
	}
	problems := map[string]string{}
	for _, p := range cfg.Problems {
		problems[p.Path] += p.Message
	}
	for path, want := range map[string]string{
		"mcpServers.c.socket":  "must be an absolute path",
		"mcpServers.d.command": "does not belong to a socket server",
		"mcpServers.e":         `needs "socket"`,
		"mcpServers.f.socket":  `belongs to servers of type "socket"`,
	} {
		if !strings.Contains(problems[path], want) {
			t.Errorf("%s: %q, want %q (all: %v)", path, problems[path], want, problems)
		}
	}
}

// TestTraceSetting: settings.trace is true (the default bounds, the state
// directory), or an object; a project's file cannot choose its directory.
func TestTraceSetting(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	writeFile(t, d.UserFile(), `{"settings": {"trace": true}}`)
	cfg := Load(d)
	if tr := cfg.Settings.Trace; tr == nil || tr.MaxBytes != DefaultTraceMaxBytes || cfg.TraceDir() != filepath.Join(d.StateDir(), "traces") {
		t.Errorf("trace: %+v in %q", tr, cfg.TraceDir())
	}
	writeFile(t, d.UserFile(), `{"settings": {"trace": {"dir": "~/t", "maxEvents": 5}}}`)
	cfg = Load(d)
	if tr := cfg.Settings.Trace; tr == nil || tr.MaxEvents != 5 || cfg.TraceDir() != filepath.Join(d.Home, "t") {
		t.Errorf("trace: %+v in %q", tr, cfg.TraceDir())
	}
	writeFile(t, d.UserFile(), `{"settings": {"trace": false}}`)
	if cfg = Load(d); cfg.Settings.Trace != nil {
		t.Errorf("trace false: %+v", cfg.Settings.Trace)
	}
}

// TestScriptSettings: settings.scriptMode and settings.scriptTimeoutMs are
// read, off and unset by default; a timeout out of range is an error naming
// the setting.
func TestScriptSettings(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	writeFile(t, d.UserFile(), `{"settings": {}}`)
	if cfg := Load(d); cfg.Settings.ScriptMode || cfg.Settings.ScriptTimeout != 0 {
		t.Errorf("default: scriptMode %v, scriptTimeout %v; want off, 0", cfg.Settings.ScriptMode, cfg.Settings.ScriptTimeout)
	}
	writeFile(t, d.UserFile(), `{"settings": {"scriptMode": true, "scriptTimeoutMs": 5000}}`)
	cfg := Load(d)
	if !cfg.Settings.ScriptMode || cfg.Settings.ScriptTimeout != 5*time.Second {
		t.Errorf("got scriptMode %v, scriptTimeout %v; want true, 5s", cfg.Settings.ScriptMode, cfg.Settings.ScriptTimeout)
	}
	writeFile(t, d.UserFile(), `{"settings": {"scriptTimeoutMs": 0}}`)
	if errs := problemText(Load(d).Errors()); !strings.Contains(errs, "scriptTimeoutMs") {
		t.Errorf("scriptTimeoutMs 0: errors %q, want one naming settings.scriptTimeoutMs", errs)
	}
}

package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestBadText checks that what reaches a child process (command, args, cwd,
// env) holds no NUL and that every string is valid UTF-8: each is an error
// at the offending byte, naming the field by its JSON path, never showing
// the text.
func TestBadText(t *testing.T) {
	const nul = "must not hold NUL (\\u0000): no command line or environment can carry it"
	const high = "must be valid UTF-8, and \\ud800 is half of a UTF-16 surrogate pair"
	// Each text is one line; the error points at the first occurrence of at.
	tests := []struct {
		name string
		kind Kind
		text string
		at   string
		path string
		msg  string
	}{
		{"NUL in command", KindUser, `{"mcpServers": {"s": {"command": "hidden\u0000x"}}}`, `\u0000`, "mcpServers.s.command", nul},
		{"bad byte in command", KindUser, "{\"mcpServers\": {\"s\": {\"command\": \"hidden\xffx\"}}}", "\xff", "mcpServers.s.command", "must be valid UTF-8, and byte 0xff is not"},
		{"NUL in an argument", KindUser, `{"mcpServers": {"s": {"command": "x", "args": ["-y", "hidden\u0000b"]}}}`, `\u0000`, "mcpServers.s.args[1]", nul},
		{"lone high surrogate in an argument", KindShared, `{"mcpServers": {"s": {"command": "x", "args": ["hidden\ud800"]}}}`, `\ud800`, "mcpServers.s.args[0]", high},
		{"high surrogate before a non-surrogate", KindUser, `{"mcpServers": {"s": {"command": "x", "args": ["hidden\ud800\u0041"]}}}`, `\ud800`, "mcpServers.s.args[0]", high},
		{"lone low surrogate in an argument", KindUser, `{"mcpServers": {"s": {"command": "x", "args": ["hidden\udc00"]}}}`, `\udc00`, "mcpServers.s.args[0]", "must be valid UTF-8, and \\udc00 is half of a UTF-16 surrogate pair"},
		{"bad byte in an argument", KindProjectShared, "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"args\": [\"hidden\xc3(\"]}}}", "\xc3", "mcpServers.s.args[0]", "byte 0xc3 is not"},
		{"NUL in cwd", KindUser, `{"mcpServers": {"s": {"command": "x", "cwd": "/hidden\u0000"}}}`, `\u0000`, "mcpServers.s.cwd", nul},
		{"NUL in an env value", KindUser, `{"mcpServers": {"s": {"command": "x", "env": {"A": "hidden\u0000"}}}}`, `\u0000`, "mcpServers.s.env.A", nul},
		{"bad byte in an env value", KindShared, "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"A\": \"hidden\xfe\"}}}}", "\xfe", "mcpServers.s.env.A", "byte 0xfe is not"},
		{"NUL in an env name", KindUser, `{"mcpServers": {"s": {"command": "x", "env": {"A\u0000B": "1"}}}}`, `\u0000`, `mcpServers.s.env.A\x00B`, "the variable's name " + nul},
		{"bad byte in an env name", KindUser, "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"A\xff\": \"1\"}}}}", "\xff", "mcpServers.s.env.A\uFFFD", "the variable's name must be valid UTF-8"},
		{"= in an env name", KindUser, `{"mcpServers": {"s": {"command": "x", "env": {"A=B": "1"}}}}`, `=`, "mcpServers.s.env.A=B", "a variable's name must not be empty or hold '='"},
		{"empty env name", KindShared, `{"mcpServers": {"s": {"command": "x", "env": {"": "1"}}}}`, `"": `, "mcpServers.s.env.", "a variable's name must not be empty"},
		{"bad byte in a URL", KindUser, "{\"mcpServers\": {\"s\": {\"url\": \"https://hidden/\xff\"}}}", "\xff", "mcpServers.s.url", "byte 0xff is not"},
		{"bad byte in a setting", KindUser, "{\"settings\": {\"toolPrefix\": \"hidden\x80\"}}", "\x80", "settings.toolPrefix", "byte 0x80 is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, problems, fatal := decode(tt.kind, tt.text)
			errs := problemList(problems).errors()
			// In a server's entry the error is the server's (issue 30).
			if scoped := serverOf(tt.path) != ""; len(errs) != 1 || fatal == scoped {
				t.Fatalf("got errors %v (fatal %v), want one, fatal %v", errs, fatal, !scoped)
			}
			if serverOf(tt.path) != "" && doc.servers[0].Err == nil {
				t.Errorf("server: got %+v, want it invalid", doc.servers[0])
			}
			got := errs[0].Error()
			prefix := fmt.Sprintf("/cfg/%s.json:1:%d: %s: ", tt.kind, 1+strings.Index(tt.text, tt.at), tt.path)
			if !strings.HasPrefix(got, prefix) || !strings.Contains(got, tt.msg) {
				t.Errorf("got  %q\nwant %q + …%q…", got, prefix, tt.msg)
			}
			if strings.Contains(got, "hidden") {
				t.Errorf("got %q, want the text left out", got)
			}
		})
	}
}

// TestGoodText checks what badText must let through: escapes, surrogate
// pairs, UTF-8, and NUL where nothing is executed.
func TestGoodText(t *testing.T) {
	for _, text := range []string{
		`{"mcpServers": {"s": {"command": "x", "args": ["\ud83d\ude00", "😀", "é\u00e9", "\\u0000", "\"\n\t"], "env": {"É": "\uFFFF"}}}}`,
		`{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {"X-A": "1"}, "includeTools": ["a\u0000"]}}}`,
	} {
		if _, problems, _ := decode(KindUser, text); len(problems) > 0 {
			t.Errorf("%s: got problems %v, want none", text, problems)
		}
	}
}

// TestImportBadText checks the same rules for a host's file: an entry with
// NUL is skipped with a warning naming the host's field, and a file that
// is not UTF-8 is not imported at all, with the position of the bad byte.
func TestImportBadText(t *testing.T) {
	home := hostHome(t, map[string]string{
		cursorFile:     `{"mcpServers": {"bad": {"command": "x", "args": ["a\u0000"]}, "good": {"command": "y"}}}`,
		vscodeLinux:    "{\n  \"servers\": {\"s\": {\"command\": \"x\xff\"}}}",
		opencodeJSON:   `{"mcp": {"oc": {"type": "local", "command": ["x", "a\u0000"]}}}`,
		claudeCodeFile: `{"mcpServers": {"cc": {"command": "x", "env": {"A=B": "1"}}}}`,
	})
	d := Dirs{Home: home, GOOS: "linux"}
	tests := []struct {
		host    string
		servers []string
		problem string
	}{
		{"cursor", []string{"good"}, "mcp.json: mcpServers.bad.args[0]: must not hold NUL"},
		{"vscode", nil, "mcp.json:2:34: invalid JSON: byte 0xff is not UTF-8 (hint: save the file as UTF-8) (nothing imported)"},
		{"opencode", nil, "opencode.json: mcp.oc.command[1]: must not hold NUL"},
		{"claude-code", nil, ".claude.json: mcpServers.cc.env.A=B: a variable's name must not be empty or hold '='"},
	}
	for _, tt := range tests {
		imp := ImportHost(d, tt.host)
		var names []string
		for _, s := range imp.Servers {
			names = append(names, s.Name)
		}
		if fmt.Sprint(names) != fmt.Sprint(tt.servers) || !strings.Contains(problemText(imp.Problems), tt.problem) {
			t.Errorf("%s: got servers %v, problems %q; want %v and %q", tt.host, names, problemText(imp.Problems), tt.servers, tt.problem)
		}
	}
}

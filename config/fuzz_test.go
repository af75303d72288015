package config

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/jsonc"
)

var fuzzKinds = []Kind{KindUser, KindShared, KindAgents, KindProjectShared, KindProject, KindExplicit, KindImport}

var fuzzSeeds = []string{
	``,
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	`{"mcpServers": {}}`,
	`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}`,
	`{"mcpServers": {"gh": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}`,
	`{"mcpServers": {"gh": {"url": "https://u:${secret:P}@h/mcp?api_key=${secret:K:-d}", "headers": {"Authorization": "Bearer ${secret:GITHUB_TOKEN}", "X": "${secret:}"}}}}`,
	`{"mcpServers": {"x": {"command": "${secret:BIN}", "args": ["${secret:A}"], "env": {"TOKEN": "${secret:1}", "K": "${secret:A B}", "V": "${secret:${A}}"}}}, "settings": {"credentialStore": "keychain"}}`,
	`{"settings": {"credentialStore": "vault", "embeddings": {"baseUrl": "http://h/v1", "apiKey": "${secret:EMB}"}}}`,
	`{"mcpServers": {"x": {"disabled": true}}}`,
	`{"mcpServers": {"x": {"type": "sse", "url": "https://u:${P}@${HOST}:${PORT}/sse?k=${K:-d}", "reconnect": {"automatic": true, "maxAttempts": 5, "baseDelayMs": 1}}}}`,
	`{"mcpServers": {"x": {"command": "x", "env": {"API_TOKEN": "literal", "N": 1, "B": true}, "directTools": ["a", "b*"], "searchKeywords": {"*": ["w"]}}}}`,
	`{"mcpServers": {"x": {"command": "x", "lifecycle": "keep-alive", "idleTimeout": 0, "requestTimeoutMs": 86400000, "protocolVersion": "2025-06-18", "includeTools": [], "excludeTools": ["*"]}}}`,
	`{"settings": {"toolPrefix": "short", "idleTimeout": 5, "requestTimeoutMs": 10, "output": {"maxBytes": 1024, "maxLines": 10}, "directTools": true, "imports": ["cursor"], "embeddings": {"baseUrl": "${U}", "apiKey": "$env:K", "model": "m"}}, "imports": ["vscode"]}`,
	"// comment\n{\n  /* block */ \"mcpServers\": {\n    \"a\": {\"command\": \"a\",}, // trailing\n  },\n}\n",
	`{"mcpServers": {"a": {"command": "a"}, "a": {"url": "x"}}}`,
	`{"mcpServers": {"a": {"command": "a", "url": "https://h"}, "b": {}, "c d": {"command": "c"}, "": {}}}`,
	`{"mcpServers": {"a": {"command": 1, "args": "x", "env": [], "headers": {"A": null}, "type": "ws"}}}`,
	`{"mcpServers": {"a": {"command": "a", "idleTimeout": 1e400, "requestTimeoutMs": -1e400, "reconnect": {"maxAttempts": 1.5, "baseDelayMs": 99999999999999999999999}}}}`,
	`{"mcpServers": {"a": {"command": "a", "env": {"A": "${", "B": "${}", "C": "$env:", "D": "${A:-${B}}"}}}}`,
	`{"mcpServers": {"ünïcødé": {"command": "\u0000\ud800"}, "a": {"command": "é", "args": ["😀", "\uFFFF"]}}}`,
	"{\"mcpServers\": {\"a\": {\"command\": \"a\", \"env\": {\"TOKEN\": \"x\ny\"}}}}",
	`{"mcpServers": {"a": {"command": "a"}}`,
	`{"mcpServers": {"a": {"command": "a"}}}}`,
	`{"mcpServers": {"a" {"command": "a"}}}`,
	"/* unterminated",
	"{\"mcpServers\": {}} // no newline",
	"\xff\xfe{}",
	strings.Repeat("[", 2000),
	strings.Repeat(`{"a":`, 1500) + "1" + strings.Repeat("}", 1500),
	`{"mcpServers": {"a": {"command": "a", "autoApprove": ` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}}}`,
	`{"mcpServers": {"a": {"command": "a\u0000", "args": ["\ud800", "\ud83d\ude00", "\udc00x"], "cwd": "\u0000", "env": {"A\u0000": "1", "B=C": "2", "": "3", "D": "\u0000"}}}}`,
	"{\"mcpServers\": {\"a\": {\"command\": \"a\xff\", \"args\": [\"\xc3(\"], \"env\": {\"\xfe\": \"\x80\"}}}}",
	`{"mcpServers": {"a": {"command": "a", "env": {"DB_PASS": "p", "STRIPE_KEY": "k", "KEY": "k", "KEY_FILE": "f"}}, "b": {"url": "https://u:p@h/mcp?api_key=k&x=1&token=${T}#f", "headers": {"X-Api-Key": "k", "Private-Token": "t", "X-Trace": "x"}}}}`,
	`{"mcpServers": {"a": {"url": "https://h/${P:-a?key=b}/mcp?Api%2DKey=v&&=&token"}}}`,
}

// FuzzDecode checks that any file decodes without a panic, that a file that
// yields nothing says why, and that every problem names the file.
func FuzzDecode(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		src := Source{Kind: fuzzKinds[int(k)%len(fuzzKinds)], Path: "/fuzz/config.json", Host: "h"}
		doc, problems, fatal := decodeFile(src, data)
		hasError := false
		for _, p := range problems {
			if p.File != src.Path {
				t.Errorf("problem %q: got file %q, want %q", p.Error(), p.File, src.Path)
			}
			if p.Severity != SeverityError && p.Severity != SeverityWarning {
				t.Errorf("problem %q: got severity %q", p.Error(), p.Severity)
			}
			if p.Message == "" || p.Line < 0 || p.Col < 0 || (p.Line == 0) != (p.Col == 0) {
				t.Errorf("problem %+v: want a message and a position that is whole or absent", p)
			}
			hasError = hasError || p.Severity == SeverityError
		}
		if doc == nil && !hasError {
			t.Fatalf("got no document and no error; problems %v", problems)
		}
		if fatal && !hasError {
			t.Fatalf("got fatal without an error; problems %v", problems)
		}
		if doc == nil {
			return
		}
		if !json.Valid(doc.canon) {
			t.Errorf("canonical form %q is not JSON", doc.canon)
		}
		if len(doc.servers) > MaxServers {
			t.Errorf("got %d servers, over the bound of %d", len(doc.servers), MaxServers)
		}
		for _, s := range doc.servers {
			checkDecodedServer(t, src, s)
		}
	})
}

// checkServerText checks what validation promises of any server it lets
// through: what reaches a child process is valid UTF-8 without NUL, env
// names can be set, and no value named like a credential is a literal
// (such a literal is replaced by Redacted).
func checkServerText(t *testing.T, s *Server) {
	t.Helper()
	texts := append([]string{s.Command, s.Cwd}, s.Args...)
	for k, v := range s.Env {
		texts = append(texts, k, v)
		if k == "" || strings.Contains(k, "=") {
			t.Errorf("server %q: env name %q accepted", s.Name, k)
		}
	}
	for _, v := range texts {
		if !utf8.ValidString(v) || strings.Contains(v, "\x00") {
			t.Errorf("server %q: text %q accepted", s.Name, v)
		}
	}
	literal := func(v string) bool {
		refs, err := parseRefs(v)
		return err == nil && len(refs) == 0 && v != "" && v != Redacted
	}
	for k, v := range s.Env {
		if credentialKey(k) && literal(v) {
			t.Errorf("server %q: env %s holds a literal credential", s.Name, k)
		}
	}
	for k, v := range s.Headers {
		if credentialHeader(k) && literal(v) {
			t.Errorf("server %q: header %s holds a literal credential", s.Name, k)
		}
	}
	if refs, err := parseRefs(s.URL); err == nil {
		if redacted, _ := urlCredentials(s.URL, refs, false); redacted != s.URL {
			t.Errorf("server %q: URL %q holds a literal credential", s.Name, s.URL)
		}
	}
}

// checkDecodedServer checks what decodeFile promises about a server it
// returns.
func checkDecodedServer(t *testing.T, src Source, s *Server) {
	t.Helper()
	if !ValidName(s.Name) || s.Source != src || s.Path != "mcpServers."+s.Name {
		t.Errorf("server %q: got source %v, path %q", s.Name, s.Source, s.Path)
	}
	if s.stub {
		if !s.Disabled {
			t.Errorf("server %q: a stub that does not disable", s.Name)
		}
		return
	}
	if s.Type == "" {
		// An entry with an error: invalid, with nothing of it kept.
		if s.Err == nil || s.Command != "" || s.URL != "" || s.Env != nil || s.Headers != nil || s.Args != nil {
			t.Errorf("server %q: got %+v, want an invalid server with nothing kept", s.Name, s)
		}
		return
	}
	switch s.Type {
	case TransportStdio:
		if s.Command == "" || s.URL != "" || s.Headers != nil {
			t.Errorf("server %q: stdio with command %q, url %q, headers %v", s.Name, s.Command, s.URL, s.Headers)
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" || s.Command != "" || s.Args != nil || s.Env != nil || s.Cwd != "" {
			t.Errorf("server %q: %s with url %q, command %q", s.Name, s.Type, s.URL, s.Command)
		}
	default:
		t.Errorf("server %q: got type %q", s.Name, s.Type)
	}
	checkServerText(t, s)
	if s.IdleTimeout < -1 || s.RequestTimeout < 0 {
		t.Errorf("server %q: got idle %v, request %v", s.Name, s.IdleTimeout, s.RequestTimeout)
	}
	if r := s.Reconnect; r != (Reconnect{}) && (r.MaxAttempts < 1 || r.MaxAttempts > 5 || r.BaseDelay <= 0) {
		t.Errorf("server %q: got reconnect %+v", s.Name, r)
	}
	for _, v := range append(append([]string{s.URL}, mapValues(s.Env)...), mapValues(s.Headers)...) {
		if _, err := parseRefs(v); err != nil {
			t.Errorf("server %q: value with an invalid reference accepted: %v", s.Name, err)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// FuzzRefs checks reference parsing and expansion: no panic, references
// that lie inside the value in order, expansion that is the identity on a
// value without references and that never expands a variable's value again.
func FuzzRefs(f *testing.F) {
	for _, s := range []string{
		"", "plain", "$", "$$", "${", "${}", "${A}", "x${A}y${B}z", "${A:-d}", "${A:-}", "${A:-${B}}", "$env:A", "$env:",
		"$env:A-B", "${1}", "${A B}", "}${A}{", "${é}", "Bearer ${TOKEN}", "https://${H}:${P}/x?k=${K:-v}", "\x00${A}\xff",
		"${secret:A}", "${secret:A:-d}", "${secret:}", "${secret:1}", "${secret:A B}", "${secret:${A}}", "${secret:secret:A}",
		"Bearer ${secret:TOKEN} and ${TOKEN}", "${SECRET:A}", "$env:secret:A", "${secret:A}${secret:A}",
	} {
		f.Add(s, "val")
		f.Add(s, "")
		f.Add(s, "${A}")
		f.Add(s, "${secret:A}")
	}
	store := credstore.NewFile(f.TempDir())
	f.Fuzz(func(t *testing.T, value, varValue string) {
		refs, perr := parseRefs(value)
		// Every variable and every secret the value names holds varValue.
		for _, r := range refs {
			if r.secret {
				key := credstore.SecretKey(r.name)
				if err := store.Set(key, []byte(varValue)); err != nil {
					t.Fatal(err)
				}
				defer store.Delete(key)
			}
		}
		lookup := Lookup{Env: func(string) (string, bool) { return varValue, true }, Secrets: store}
		var parts []Secret
		out, eerr := expandRefs(value, lookup, &parts)
		missing := ""
		var re *ReferenceError
		if errors.As(eerr, &re) {
			missing, eerr = re.Var, nil
			if re.Secret && re.Store != "file" {
				t.Fatalf("expand(%q): a missing secret's error names store %q, want file", value, re.Store)
			}
		}
		if (perr == nil) != (eerr == nil) {
			t.Fatalf("parse error %v, expand error %v: want both or neither", perr, eerr)
		}
		if perr != nil {
			return
		}
		last := 0
		for _, r := range refs {
			if r.start < last || r.end <= r.start || r.end > len(value) || value[r.start] != '$' || !varNameRE().MatchString(r.name) {
				t.Fatalf("ref %+v in %q: want in order, inside the value, named", r, value)
			}
			last = r.end
		}
		if len(refs) == 0 {
			if out != value || missing != "" {
				t.Fatalf("expand(%q): got %q, missing %q, want the value itself", value, out, missing)
			}
			return
		}
		// Each reference is replaced once by the variable's value (or its
		// default when the value is empty), which is never expanded again.
		if varValue == "" {
			for _, r := range refs {
				if !r.hasDef {
					if missing != r.name {
						t.Fatalf("expand(%q) with empty values: got missing %q, want %q", value, missing, r.name)
					}
					return
				}
			}
		}
		var want strings.Builder
		prev := 0
		for _, r := range refs {
			want.WriteString(value[prev:r.start])
			if varValue != "" {
				want.WriteString(varValue)
			} else {
				want.WriteString(r.def)
			}
			prev = r.end
		}
		want.WriteString(value[prev:])
		if out != want.String() || missing != "" {
			t.Fatalf("expand(%q) with %q: got %q (missing %q), want %q", value, varValue, out, missing, want.String())
		}
		if varValue != "" && len(parts) != len(refs) {
			t.Fatalf("expand(%q) with %q: %d parts for %d references", value, varValue, len(parts), len(refs))
		}
		for _, r := range refs {
			if strings.HasPrefix(value[r.start:], "${") && r.String() != value[r.start:r.end] {
				t.Fatalf("ref %+v prints as %q, written %q", r, r.String(), value[r.start:r.end])
			}
		}
	})
}

// FuzzEdit checks the editor of our files: removing and setting members of
// any JSONC object leaves text that still parses, with the members expected.
func FuzzEdit(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("{\n  \"a\": 1, // x\n  /* y\n */ \"b\": 2, /* z\n */\n  \"c\": 3 // w\n}\n"))
	f.Add([]byte("{\"a\": 1 /* a */, \"b\": 2,}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := jsonc.Parse(data)
		if err != nil {
			return
		}
		obj, ok := root.Value.(*hujson.Object)
		if !ok || len(obj.Members) == 0 {
			return
		}
		names := make([]string, len(obj.Members))
		for i := range obj.Members {
			names[i] = obj.Members[i].Name.Value.(hujson.Literal).String()
		}
		name := names[len(data)%len(names)]
		edited := root.Clone()
		eobj := edited.Value.(*hujson.Object)
		jsonc.RemoveMember(eobj, name)
		reparsed, err := jsonc.Parse(edited.Pack())
		if err != nil {
			t.Fatalf("after removing %q: %v\n%s", name, err, edited.Pack())
		}
		robj := reparsed.Value.(*hujson.Object)
		if got, want := len(robj.Members), len(obj.Members)-1; got != want {
			t.Fatalf("after removing %q: got %d members, want %d", name, got, want)
		}

		if err := jsonc.SetMember(eobj, "added", map[string]any{"command": "x"}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := jsonc.Parse(edited.Pack()); err != nil {
			t.Fatalf("after adding: %v\n%s", err, edited.Pack())
		}
	})
}

// BenchmarkDecodeLarge decodes a file of the largest size read, with many
// env keys and many problems: decoding is linear in the file, so that an
// untrusted project file (decoded before trust is checked) cannot stall
// every command.
func BenchmarkDecodeLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"K\": \"v\"")
	for i := 0; sb.Len() < maxFileSize/2; i++ {
		sb.WriteString(",\n\"K" + strconv.Itoa(i) + "\": \"v\"")
	}
	sb.WriteString("}}")
	for i := 0; sb.Len() < maxFileSize-100; i++ {
		sb.WriteString(",\n\"t" + strconv.Itoa(i) + "\": {\"command\": \"x\", \"u\": 1}")
	}
	sb.WriteString("}}")
	data := []byte(sb.String())
	src := Source{Kind: KindProjectShared, Path: "/p/.mcp.json"}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		decodeFile(src, data)
	}
}

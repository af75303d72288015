package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// lookupOf returns a Lookup of env, like os.LookupEnv, without a store.
func lookupOf(env map[string]string) Lookup {
	return Lookup{Env: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
}

func TestResolve(t *testing.T) {
	env := map[string]string{
		"A":     "a",
		"B":     "b",
		"EMPTY": "",
		"REC":   "${A}",    // not expanded again
		"ENVR":  "$env:A",  // nor this
		"DEF":   "${X:-y}", // nor this
	}
	tests := []struct {
		value string
		want  string
		miss  string // the variable of the *ReferenceError
	}{
		{"${A}", "a", ""},
		{"pre-${A}-post", "pre-a-post", ""},
		{"${A}${B}", "ab", ""},
		{"Bearer ${A}", "Bearer a", ""},
		{"${UNSET:-dflt}", "dflt", ""},
		{"${EMPTY:-dflt}", "dflt", ""},
		{"${A:-dflt}", "a", ""},
		{"${UNSET:-}", "", ""},
		{"${UNSET:-has:colon}", "has:colon", ""},
		{"${UNSET:-$env:A}", "$env:A", ""}, // a default is literal too
		{"$env:A", "a", ""},
		{"x$env:A", "x$env:A", ""}, // $env: only as the whole value
		{"$A", "$A", ""},
		{"$", "$", ""},
		{"{A}", "{A}", ""},
		{"${A}}", "a}", ""},
		{"plain", "plain", ""},
		{"", "", ""},
		{"${REC}", "${A}", ""},
		{"${ENVR}", "$env:A", ""},
		{"${DEF}", "${X:-y}", ""},
		{"${UNSET}", "", "UNSET"},
		{"${EMPTY}", "", "EMPTY"},
		{"$env:UNSET", "", "UNSET"},
		{"$env:EMPTY", "", "EMPTY"},
		{"${A}${UNSET}${OTHER}", "", "UNSET"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			s := &Server{Name: "s", Source: Source{Kind: KindUser, Path: "/cfg.json"}, Path: "mcpServers.s",
				Type: TransportStdio, Command: "x", Env: map[string]string{"V": tt.value}}
			r, err := s.Resolve(lookupOf(env))
			if tt.miss == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if got := r.Env["V"].Reveal(); got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
				return
			}
			var re *ReferenceError
			if !errors.As(err, &re) || !errors.Is(err, ErrReference) {
				t.Fatalf("Resolve: got %v, want a *ReferenceError matching ErrReference", err)
			}
			want := &ReferenceError{Server: "s", File: "/cfg.json", Path: "mcpServers.s.env.V", Var: tt.miss}
			if diff := cmp.Diff(want, re); diff != "" {
				t.Errorf("ReferenceError (-want +got):\n%s", diff)
			}
			msg := err.Error()
			for _, part := range []string{`server "s"`, "/cfg.json", "mcpServers.s.env.V", tt.miss, "hint: export " + tt.miss} {
				if !strings.Contains(msg, part) {
					t.Errorf("got %q, want it to name %q", msg, part)
				}
			}
			if r != nil {
				t.Errorf("got resolved %v with an error, want nil", r)
			}
		})
	}
}

func TestResolveFields(t *testing.T) {
	// References are expanded in env, headers and url; command, args and
	// cwd are literal, with a warning.
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `{"mcpServers": {
		"web": {"url": "https://${HOST}/mcp?key=${KEY}", "headers": {"Authorization": "Bearer ${KEY}", "X-Plain": "v"}},
		"cli": {"command": "${BIN}", "args": ["--key", "${KEY}"], "cwd": "${DIR}", "env": {"API_KEY": "$env:KEY"}},
		"nothing": {"command": "x"}
	}}`)
	c := Load(d)
	noErrors(t, c)
	lookup := lookupOf(map[string]string{"HOST": "h.example", "KEY": "k1", "BIN": "/bin/evil", "DIR": "/tmp"})
	resolved := func(name string) *Resolved {
		r, err := mustServer(t, c, name).Resolve(lookup)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", name, err)
		}
		return r
	}
	type flat struct {
		URL     string
		Env     map[string]string
		Headers map[string]string
	}
	reveal := func(r *Resolved) flat {
		f := flat{URL: r.URL.Reveal()}
		for k, v := range r.Env {
			if f.Env == nil {
				f.Env = map[string]string{}
			}
			f.Env[k] = v.Reveal()
		}
		for k, v := range r.Headers {
			if f.Headers == nil {
				f.Headers = map[string]string{}
			}
			f.Headers[k] = v.Reveal()
		}
		return f
	}
	tests := []struct {
		name string
		want flat
	}{
		{"web", flat{URL: "https://h.example/mcp?key=k1", Headers: map[string]string{"Authorization": "Bearer k1", "X-Plain": "v"}}},
		{"cli", flat{Env: map[string]string{"API_KEY": "k1"}}},
		{"nothing", flat{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, reveal(resolved(tt.name))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	cli := mustServer(t, c, "cli")
	if cli.Command != "${BIN}" || cli.Cwd != "${DIR}" || !cmp.Equal(cli.Args, []string{"--key", "${KEY}"}) {
		t.Errorf("cli: got command %q, args %q, cwd %q, want them as written", cli.Command, cli.Args, cli.Cwd)
	}
	if w := problemText(c.Warnings()); !strings.Contains(w, "mcpServers.cli.command: command is passed literally: the reference ${BIN} is not expanded there") {
		t.Errorf("warnings: got %q, want one about the literal command", w)
	}
	for _, tt := range []struct{ body, path string }{
		{`{"command": "x", "cwd": "${DIR}"}`, "mcpServers.s.cwd"},
		{`{"command": "x", "args": ["a", "$env:X"]}`, "mcpServers.s.args"},
	} {
		_, problems, _ := decode(KindUser, srv(tt.body))
		if len(problems) != 1 || problems[0].Severity != SeverityWarning || problems[0].Path != tt.path {
			t.Errorf("%s: got %v, want one warning at %s", tt.body, problems, tt.path)
		}
	}
	if got, want := mustServer(t, c, "web").References(), []string{"HOST", "KEY"}; !cmp.Equal(got, want) {
		t.Errorf("References: got %v, want %v", got, want)
	}

	// A missing variable in a header or the URL names that path.
	for _, tt := range []struct {
		lookup     map[string]string
		path, miss string
	}{
		{map[string]string{"KEY": "k"}, "mcpServers.web.url", "HOST"},
		{map[string]string{"HOST": "h", "KEY": ""}, "mcpServers.web.url", "KEY"},
	} {
		_, err := mustServer(t, c, "web").Resolve(lookupOf(tt.lookup))
		var re *ReferenceError
		if !errors.As(err, &re) || re.Path != tt.path || re.Var != tt.miss {
			t.Errorf("got %v, want a reference error for %s at %s", err, tt.miss, tt.path)
		}
	}
	h := &Server{Name: "h", Path: "mcpServers.h", Type: TransportHTTP, URL: "https://x", Headers: map[string]string{"Authorization": "Bearer ${T}"}}
	if _, err := h.Resolve(lookupOf(nil)); !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), "mcpServers.h.headers.Authorization") {
		t.Errorf("header: got %v, want a reference error at mcpServers.h.headers.Authorization", err)
	}
}

func TestParseRefs(t *testing.T) {
	tests := []struct {
		value string
		names []string // nil with ok false for an error
		ok    bool
	}{
		{"", nil, true},
		{"no refs", nil, true},
		{"${A}", []string{"A"}, true},
		{"${_a1}-${B:-x}", []string{"_a1", "B"}, true},
		{"$env:A_1", []string{"A_1"}, true},
		{"$env", nil, true},
		{"$$ {A} $A }", nil, true},
		{"${", nil, false},
		{"x ${A", nil, false},
		{"${}", nil, false},
		{"${1A}", nil, false},
		{"${A-B}", nil, false},
		{"${A B}", nil, false},
		{"${:-x}", nil, false},
		{"${A:x}", nil, false},
		{"${é}", nil, false},
		{"$env:", nil, false},
		{"$env:1A", nil, false},
		{"$env:A-B", nil, false},
		{"$env:A B", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			refs, err := parseRefs(tt.value)
			if (err == nil) != tt.ok {
				t.Fatalf("got error %v, want ok %v", err, tt.ok)
			}
			var names []string
			for _, r := range refs {
				names = append(names, r.name)
				if got := tt.value[r.start:r.end]; !strings.HasPrefix(got, "$") || (!strings.HasSuffix(got, "}") && !strings.HasPrefix(got, "$env:")) {
					t.Errorf("range: got %q, want the whole reference", got)
				}
			}
			if !cmp.Equal(names, tt.names) {
				t.Errorf("names: got %v, want %v", names, tt.names)
			}
		})
	}
}

func TestInvalidReferenceFailsClosed(t *testing.T) {
	// A reference that does not parse is a schema error: the value cannot
	// be what the user meant. It makes the server invalid (issue 30).
	tests := []struct{ body, path string }{
		{`{"command": "x", "env": {"A": "${A"}}`, "mcpServers.s.env.A"},
		{`{"command": "x", "env": {"TOKEN": "${1}"}}`, "mcpServers.s.env.TOKEN"},
		{`{"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T"}}`, "mcpServers.s.headers.Authorization"},
		{`{"url": "https://h/${"}`, "mcpServers.s.url"},
		{`{"url": "$env:bad-name"}`, "mcpServers.s.url"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, kind := range []Kind{KindUser, KindShared} {
				doc, problems, fatal := decode(kind, srv(tt.body))
				if fatal || len(problems) != 1 || problems[0].Path != tt.path || !strings.Contains(problems[0].Message, "reference") {
					t.Errorf("%s: got %v (fatal %v), want one reference error at %s, the server's", kind, problems, fatal, tt.path)
				}
				if doc.servers[0].Err == nil || doc.servers[0].Env != nil || doc.servers[0].URL != "" {
					t.Errorf("%s: got server %+v, want it invalid, its values dropped", kind, doc.servers[0])
				}
			}
		})
	}
	// Resolve checks again, for a Server made by hand.
	s := &Server{Name: "s", Path: "mcpServers.s", Env: map[string]string{"A": "${A"}}
	if _, err := s.Resolve(lookupOf(map[string]string{"A": "a"})); err == nil || errors.Is(err, ErrReference) || !strings.Contains(err.Error(), "mcpServers.s.env.A") {
		t.Errorf("Resolve: got %v, want a syntax error naming mcpServers.s.env.A", err)
	}
}

func TestCredentialLiterals(t *testing.T) {
	const literal = "lit-canary-0123"
	tests := []struct {
		name  string
		kind  string // "env" or "headers"
		key   string
		value string
		bad   bool
	}{
		{"token", "env", "GITHUB_TOKEN", literal, true},
		{"token lower case", "env", "github_token", literal, true},
		{"token mixed case", "env", "AccessToken", literal, true},
		{"secret", "env", "CLIENT_SECRET", literal, true},
		{"password", "env", "db_password", literal, true},
		{"api key", "env", "OPENAI_API_KEY", literal, true},
		{"apikey", "env", "ApiKey", literal, true},
		{"credential", "env", "GOOGLE_APPLICATION_CREDENTIALS", literal, true},
		{"oauth", "env", "OAUTH_CLIENT", literal, true},
		{"authorization", "headers", "Authorization", "Bearer " + literal, true},
		{"authorization lower case", "headers", "authorization", literal, true},
		{"cookie", "headers", "COOKIE", "session=" + literal, true},
		{"proxy authorization", "headers", "Proxy-Authorization", literal, true},
		{"pass suffix", "env", "DB_PASS", literal, true},
		{"pass alone", "env", "PASS", literal, true},
		{"passwd", "env", "MYSQL_PASSWD", literal, true},
		{"key suffix", "env", "STRIPE_KEY", literal, true},
		{"key suffix lower case", "env", "signing_key", literal, true},
		{"secret suffix", "env", "APP_SECRET", literal, true},
		{"x-api-key", "headers", "X-Api-Key", literal, true},
		{"x-goog-api-key", "headers", "x-goog-api-key", literal, true},
		{"subscription key", "headers", "Ocp-Apim-Subscription-Key", literal, true},
		{"private token", "headers", "Private-Token", literal, true},
		{"x-auth-token", "headers", "X-Auth-Token", literal, true},
		{"api_key header", "headers", "API_KEY", literal, true},
		{"query api_key", "query", "api_key", literal, true},
		{"query apiKey", "query", "apiKey", literal, true},
		{"query token", "query", "token", literal, true},
		{"query access_token escaped", "query", "access%5Ftoken", literal, true},
		{"reference", "env", "GITHUB_TOKEN", "${GITHUB_TOKEN}", false},
		{"reference with a default", "env", "API_KEY", "${API_KEY:-}", false},
		{"$env reference", "env", "API_KEY", "$env:API_KEY", false},
		{"bearer reference", "headers", "Authorization", "Bearer ${API_TOKEN}", false},
		{"empty literal", "env", "API_TOKEN", "", false},
		{"not a credential", "env", "DEBUG", literal, false},
		{"key alone is not a credential", "env", "KEY_FILE", literal, false},
		{"other header", "headers", "X-Trace", literal, false},
		{"pass inside a name", "env", "PASSENGER_COUNT", literal, false},
		{"key inside a name", "env", "KEYBOARD_LAYOUT", literal, false},
		{"api key header reference", "headers", "X-Api-Key", "${LINEAR_API_KEY}", false},
		{"other query parameter", "query", "page", literal, false},
		{"query reference", "query", "api_key", "${API_KEY}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := fmt.Sprintf(`{"command": "x", "env": {%q: %q}}`, tt.key, tt.value)
			switch tt.kind {
			case "headers":
				def = fmt.Sprintf(`{"url": "https://h/mcp", "headers": {%q: %q}}`, tt.key, tt.value)
			case "query":
				def = fmt.Sprintf(`{"url": "https://h/mcp?x=1&%s=%s#top"}`, tt.key, tt.value)
			}
			d := newDirs(t)
			writeFile(t, pathsOf(d).user, `{"mcpServers": {"bad": `+def+`, "good": {"command": "good"}}}`)
			c := Load(d)
			if c.Err() != nil {
				t.Fatalf("Err: got %v, want nil: the error is scoped to the server", c.Err())
			}
			if _, err := c.Usable("good"); err != nil {
				t.Errorf("Usable(good): got %v, want usable", err)
			}
			bad := mustServer(t, c, "bad")
			_, err := c.Usable("bad")
			if !tt.bad {
				if err != nil || bad.Err != nil || len(c.Errors()) > 0 {
					t.Errorf("got Usable %v, Err %v, errors %v, want none", err, bad.Err, c.Errors())
				}
				return
			}
			if err == nil || bad.Err == nil || err != bad.Err {
				t.Fatalf("Usable(bad): got %v, Server.Err %v, want the server's error", err, bad.Err)
			}
			path := "mcpServers.bad." + tt.kind + "." + tt.key
			if tt.kind == "query" {
				path = "mcpServers.bad.url"
			}
			for _, part := range []string{`server "bad"`, pathsOf(d).user, path, "must be a reference", "the value is not shown"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("got %q, want it to name %q", err, part)
				}
			}
			// The definition holds [redacted] in place of the literal, so
			// nothing that prints it (config show) can show the value.
			shown, _ := json.Marshal(bad.Definition())
			if !strings.Contains(string(shown), Redacted) {
				t.Errorf("got definition %s, want %s in place of the literal", shown, Redacted)
			}
			all := problemText(c.Problems) + err.Error() + fmt.Sprintf("%+v %s", bad, shown)
			if strings.Contains(all, "canary") {
				t.Errorf("got %q, want the literal left out", all)
			}
		})
	}
}

func TestCredentialLiteralScope(t *testing.T) {
	tests := []struct {
		name   string
		files  func(p paths) map[string]string
		trust  bool
		usable bool
	}{
		{
			name: "shared file, number literal",
			files: func(p paths) map[string]string {
				return map[string]string{p.shared: `{"mcpServers": {"x": {"command": "x", "env": {"API_TOKEN": 12345}}}}`}
			},
		},
		{
			name: "overridden by a higher definition",
			files: func(p paths) map[string]string {
				return map[string]string{
					p.shared: `{"mcpServers": {"x": {"command": "x", "env": {"API_TOKEN": "lit"}}}}`,
					p.user:   `{"mcpServers": {"x": {"command": "x", "env": {"API_TOKEN": "${API_TOKEN}"}}}}`,
				}
			},
			usable: true,
		},
		{
			name: "trusted project",
			files: func(p paths) map[string]string {
				return map[string]string{p.projectShared: `{"mcpServers": {"x": {"url": "https://h", "headers": {"Cookie": "lit"}}}}`}
			},
			trust: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			for path, text := range tt.files(pathsOf(d)) {
				writeFile(t, path, text)
			}
			if tt.trust {
				trust(t, d)
			}
			c := Load(d)
			if c.Err() != nil {
				t.Fatalf("Err: got %v, want nil", c.Err())
			}
			if _, err := c.Usable("x"); (err == nil) != tt.usable {
				t.Errorf("Usable(x): got %v, want usable %v", err, tt.usable)
			}
		})
	}
}

func TestSecretNeverPrints(t *testing.T) {
	const canary = "canary-5ecret"
	s := newSecret(canary)
	if got := s.Reveal(); got != canary {
		t.Fatalf("Reveal: got %q, want %q", got, canary)
	}
	if got := (Secret{}).Reveal(); got != "" {
		t.Errorf("zero Reveal: got %q, want empty", got)
	}
	r := &Resolved{URL: s, Env: map[string]Secret{"K": s}, Headers: map[string]Secret{"Authorization": s}}
	// A Secret kept in another type's unexported field, as a transport might.
	type holder struct {
		tok     Secret
		headers map[string]Secret
		res     Resolved
	}
	h := holder{s, map[string]Secret{"a": s}, *r}

	var outs []string
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10.3s", "%T"} {
		for _, arg := range []any{s, &s, []Secret{s}, map[string]Secret{"k": s}, *r, r, h, &h} {
			outs = append(outs, fmt.Sprintf(verb, arg))
		}
	}
	outs = append(outs, fmt.Sprint(s, r), fmt.Sprintln(s, r), s.String(), s.GoString())
	for _, v := range []any{s, r, map[string]Secret{"k": s}, struct{ S Secret }{s}} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(data))
	}
	if text, err := s.MarshalText(); err != nil || string(text) != "[redacted]" {
		t.Errorf("MarshalText: got %q, %v, want [redacted]", text, err)
	}
	var logs bytes.Buffer
	for _, l := range []*slog.Logger{slog.New(slog.NewTextHandler(&logs, nil)), slog.New(slog.NewJSONHandler(&logs, nil))} {
		l.Info("connect", "secret", s, "resolved", r)
	}
	outs = append(outs, logs.String(), fmt.Errorf("wrapping %v", s).Error())

	for _, out := range outs {
		if strings.Contains(out, canary) || strings.Contains(out, fmt.Sprintf("%x", canary)) {
			t.Errorf("got %q, want the value left out", out)
		}
	}
	if got := fmt.Sprintf("%v|%s|%+v|%#v|%q", s, s, s, s, s); got != strings.Repeat("[redacted]|", 4)+"[redacted]" {
		t.Errorf("got %q, want [redacted] for every verb", got)
	}
}

// TestCanary resolves references to a canary value and checks that the
// value reaches nothing but Reveal: no problem, error, String, Target or
// fmt output of the configuration, its servers or the resolved values.
func TestCanary(t *testing.T) {
	const canary = "cAnArY-9d1e"     // every variable's value
	const literal = "cAnArY-literal" // a credential written as a literal
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"mcpServers": {
		"cli": {"command": "run", "args": ["--key", "${KEY}"], "env": {"GITHUB_TOKEN": "${KEY}", "MIXED": "x-${KEY}-y", "D": "${NOPE:-${KEY}}"}},
		"web": {"url": "https://${HOST}/mcp?key=${KEY}", "headers": {"Authorization": "Bearer ${KEY}", "Cookie": "$env:KEY"}},
		"partial": {"command": "run", "env": {"A": "${KEY}", "B": "${MISSING}"}},
		"literal": {"command": "run", "env": {"API_TOKEN": "`+literal+`"}},
		"userinfo": {"url": "https://me:`+literal+`@h/mcp"}
	}, "settings": {"embeddings": {"baseUrl": "${HOST}", "apiKey": "${KEY}"}}}`)
	writeFile(t, p.projectShared, `{"mcpServers": {"proj": {"command": "x", "env": {"SECRET": "`+literal+`"}}}}`)
	c := Load(d)
	lookup := lookupOf(map[string]string{"KEY": canary, "HOST": canary + ".example"})

	var outs []string
	add := func(xs ...any) {
		for _, x := range xs {
			outs = append(outs, fmt.Sprintf("%v", x), fmt.Sprintf("%+v", x), fmt.Sprintf("%#v", x), fmt.Sprintf("%s", x))
		}
	}
	revealed := 0
	for _, s := range c.Servers {
		r, err := s.Resolve(lookup)
		if err != nil {
			add(err)
		} else {
			add(r, *r)
			if data, err := json.Marshal(r); err == nil {
				outs = append(outs, string(data))
			}
			for _, v := range r.Env {
				if strings.Contains(v.Reveal(), canary) {
					revealed++
				}
			}
		}
		outs = append(outs, s.String(), s.Target())
		add(s, *s)
		if s.Err != nil {
			add(s.Err)
		}
		if _, err := c.Usable(s.Name); err != nil {
			add(err)
		}
	}
	if revealed == 0 {
		t.Fatalf("got no value holding the canary from Reveal: the test checks nothing")
	}
	add(c, *c, c.Err(), c.Settings)
	for _, p := range c.Problems {
		outs = append(outs, p.Error())
		add(p)
	}
	for _, out := range outs {
		if strings.Contains(out, canary) {
			t.Errorf("got %q, want the resolved value left out", out)
		}
	}

	// A credential written as a literal is replaced by [redacted] in the
	// definition, and no problem or error repeats it.
	for _, s := range c.Servers {
		def, _ := json.Marshal(s.Definition())
		outs = append(outs, string(def))
	}
	for _, out := range outs {
		if strings.Contains(out, literal) {
			t.Errorf("got %q, want the literal left out", out)
		}
	}
	var errs []string
	for _, p := range c.Problems {
		errs = append(errs, p.Error())
	}
	for _, s := range c.Servers {
		if s.Err != nil {
			errs = append(errs, s.Err.Error())
		}
	}
	if len(errs) < 2 {
		t.Fatalf("got problems %v, want the two literals reported", errs)
	}
	for _, e := range errs {
		if strings.Contains(e, literal) {
			t.Errorf("got %q, want the literal left out", e)
		}
	}
}

func TestResolveChecksTheResolvedURL(t *testing.T) {
	s := &Server{Name: "api", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.api", Type: TransportHTTP, URL: "${API_URL}"}
	lookup := Lookup{Env: func(k string) (string, bool) { return "ftp://canary-host.example/secret-path", true }}
	_, err := s.Resolve(lookup)
	if err == nil || !strings.Contains(err.Error(), "mcpServers.api.url") || !strings.Contains(err.Error(), "not an http:// or https:// URL") {
		t.Fatalf("Resolve = %v, want an error naming mcpServers.api.url", err)
	}
	if strings.Contains(err.Error(), "canary-host") {
		t.Errorf("error shows the resolved value: %v", err)
	}
	ok := Lookup{Env: func(k string) (string, bool) { return "https://example.com", true }}
	if _, err := s.Resolve(ok); err != nil {
		t.Errorf("Resolve with an https URL = %v", err)
	}
}

// TestURLCredentials checks where urlCredentials finds literal credentials
// in a URL as written, and that it replaces exactly them.
func TestURLCredentials(t *testing.T) {
	tests := []struct {
		raw      string
		password bool // url.Parse found a literal password
		want     string
		params   []string
	}{
		{"https://h/mcp", false, "https://h/mcp", nil},
		{"https://me:pw@h/mcp", true, "https://me:[redacted]@h/mcp", nil},
		{"https://${USER}:pw@h:${PORT}/mcp", true, "https://${USER}:[redacted]@h:${PORT}/mcp", nil},
		{"https://me:pw@h/mcp?api_key=k1&page=2&token=k2#frag", true, "https://me:[redacted]@h/mcp?api_key=[redacted]&page=2&token=[redacted]#frag", []string{"api_key", "token"}},
		{"https://h/mcp?key=${K}&secret=s${X}", false, "https://h/mcp?key=${K}&secret=s${X}", nil},
		{"https://h/${P:-a?key=b}/mcp?x=1", false, "https://h/${P:-a?key=b}/mcp?x=1", nil},
		{"https://h/mcp#?token=notaquery", false, "https://h/mcp#?token=notaquery", nil},
		{"https://h/mcp?token=&key", false, "https://h/mcp?token=&key", nil},
		{"https://h/mcp?Api%2DKey=v", false, "https://h/mcp?Api%2DKey=[redacted]", []string{"Api-Key"}},
		// Where url.Parse saw a password that cannot be placed, all goes.
		{"https://h/mcp", true, Redacted, nil},
	}
	for _, tt := range tests {
		refs, err := parseRefs(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, params := urlCredentials(tt.raw, refs, tt.password)
		if got != tt.want || !slices.Equal(params, tt.params) {
			t.Errorf("urlCredentials(%q, %v): got %q, %q; want %q, %q", tt.raw, tt.password, got, params, tt.want, tt.params)
		}
	}
}

// TestEmbeddingsLiteralRedacted checks that a literal API key in the
// settings, which fails the configuration, is not kept to be printed.
func TestEmbeddingsLiteralRedacted(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `{"settings": {"embeddings": {"baseUrl": "http://h/v1", "apiKey": "sk-canary-literal"}}}`)
	c := Load(d)
	if c.Err() == nil || !strings.Contains(c.Err().Error(), "settings.embeddings.apiKey") {
		t.Errorf("Err: got %v, want an error naming settings.embeddings.apiKey", c.Err())
	}
	if e := c.Settings.Embeddings; e == nil || e.APIKey != Redacted {
		t.Errorf("Settings.Embeddings: got %+v, want the API key %s", e, Redacted)
	}
}

// storeOf returns a file store in a temporary directory holding secrets.
func storeOf(t *testing.T, secrets map[string]string) *credstore.File {
	t.Helper()
	s := credstore.NewFile(t.TempDir())
	for name, v := range secrets {
		if err := s.Set(credstore.SecretKey(name), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestResolveSecrets: ${secret:NAME} takes its value from the credential
// store, in env, headers and url alike, next to ${VAR} from the
// environment; the values stay Secrets, and each is among Parts.
func TestResolveSecrets(t *testing.T) {
	const canary = "ghp_secretCanary0123456789"
	store := storeOf(t, map[string]string{"GH": canary, "HOST": "h.example", "EMPTY": ""})
	lookup := Lookup{Env: lookupOf(map[string]string{"USER": "me", "GH": "from-the-environment"}).Env, Secrets: store}
	web := &Server{Name: "web", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.web", Type: TransportHTTP,
		URL: "https://${secret:HOST}/mcp", Headers: map[string]string{"Authorization": "Bearer ${secret:GH}", "X-User": "${USER}"}}
	r, err := web.Resolve(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.URL.Reveal(); got != "https://h.example/mcp" {
		t.Errorf("URL = %q", got)
	}
	if got := r.Headers["Authorization"].Reveal(); got != "Bearer "+canary {
		t.Errorf("Authorization = %q, want the stored secret, not the environment's GH", got)
	}
	if got := r.Headers["X-User"].Reveal(); got != "me" {
		t.Errorf("X-User = %q", got)
	}
	if got := fmt.Sprintf("%v %+v %#v %s", r, r, r.Headers, r.Headers["Authorization"]); strings.Contains(got, canary) {
		t.Errorf("a resolved secret prints: %s", got)
	}
	var parts []string
	for _, p := range r.Parts {
		parts = append(parts, p.Reveal())
	}
	if !slices.Contains(parts, canary) {
		t.Errorf("Parts = %d values, want the secret among them", len(parts))
	}

	cli := &Server{Name: "cli", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.cli", Type: TransportStdio, Command: "x",
		Env: map[string]string{"GITHUB_TOKEN": "${secret:GH}", "D": "${secret:NOPE:-fallback}"}}
	r, err = cli.Resolve(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if r.Env["GITHUB_TOKEN"].Reveal() != canary || r.Env["D"].Reveal() != "fallback" {
		t.Errorf("env = %q, %q", r.Env["GITHUB_TOKEN"].Reveal(), r.Env["D"].Reveal())
	}
}

// TestResolveMissingSecret: a secret that is not stored (or is empty) fails
// the server with an error naming the server, the place, the secret, the
// store and the command that sets it; without a store, the error says so.
func TestResolveMissingSecret(t *testing.T) {
	store := storeOf(t, map[string]string{"EMPTY": ""})
	for _, name := range []string{"NOPE", "EMPTY"} {
		s := &Server{Name: "gh", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.gh", Type: TransportStdio, Command: "x",
			Env: map[string]string{"GITHUB_TOKEN": "${secret:" + name + "}"}}
		_, err := s.Resolve(Lookup{Secrets: store})
		want := &ReferenceError{Server: "gh", File: "/cfg.json", Path: "mcpServers.gh.env.GITHUB_TOKEN", Var: name, Secret: true, Store: "file"}
		var re *ReferenceError
		if !errors.As(err, &re) || !errors.Is(err, ErrReference) {
			t.Fatalf("Resolve = %v, want a *ReferenceError", err)
		}
		if diff := cmp.Diff(want, re); diff != "" {
			t.Errorf("ReferenceError (-want +got):\n%s", diff)
		}
		wantMsg := `server "gh": /cfg.json: mcpServers.gh.env.GITHUB_TOKEN: secret ` + name + ` is not in the credential store (file) or is empty (hint: switchboard secret set ` + name + `)`
		if err.Error() != wantMsg {
			t.Errorf("error:\n got %s\nwant %s", err, wantMsg)
		}
	}
	s := &Server{Name: "gh", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.gh", Type: TransportStdio, Command: "x",
		Env: map[string]string{"GITHUB_TOKEN": "${secret:GH}"}}
	_, err := s.Resolve(lookupOf(map[string]string{"GH": "from-the-environment"}))
	if err == nil || err.Error() != `server "gh": /cfg.json: mcpServers.gh.env.GITHUB_TOKEN: secret GH: there is no credential store to read it from` {
		t.Errorf("Resolve without a store = %v", err)
	}
}

// TestResolveUnreadableStore: a store that cannot be read is an error that
// names the server, the place, the secret and the store's own trouble, and
// is no ReferenceError (the secret may well be stored).
func TestResolveUnreadableStore(t *testing.T) {
	dir := t.TempDir()
	store := credstore.NewFile(dir)
	if err := store.Set(credstore.SecretKey("GH"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents { // the value's file becomes a directory: reading it fails
		os.Remove(filepath.Join(dir, e.Name()))
		os.Mkdir(filepath.Join(dir, e.Name()), 0o700)
	}
	s := &Server{Name: "gh", Source: Source{Path: "/cfg.json"}, Path: "mcpServers.gh", Type: TransportStdio, Command: "x",
		Env: map[string]string{"GITHUB_TOKEN": "${secret:GH}"}}
	_, err := s.Resolve(Lookup{Secrets: store})
	if err == nil || errors.Is(err, ErrReference) || !strings.HasPrefix(err.Error(), `server "gh": /cfg.json: mcpServers.gh.env.GITHUB_TOKEN: secret GH: reading credential "secret/GH"`) {
		t.Errorf("Resolve = %v", err)
	}
}

func TestSecretReferences(t *testing.T) {
	s := &Server{URL: "https://${secret:HOST}/x?k=${K}", Headers: map[string]string{"A": "${secret:TOKEN} ${secret:HOST}", "B": "$env:B"}}
	if got, want := s.SecretReferences(), []string{"HOST", "TOKEN"}; !cmp.Equal(got, want) {
		t.Errorf("SecretReferences = %v, want %v", got, want)
	}
	if got, want := s.References(), []string{"B", "K"}; !cmp.Equal(got, want) {
		t.Errorf("References = %v, want %v", got, want)
	}
}

// TestSecretRefSyntax: what ${secret:…} accepts, and the errors of what it
// does not.
func TestSecretRefSyntax(t *testing.T) {
	for _, tt := range []struct{ value, err string }{
		{"${secret:A_1}", ""},
		{"Bearer ${secret:T} ${V}", ""},
		{"${secret:A:-d}", ""},
		{"${secret:}", "${secret:NAME} takes a secret name of 1 to 128 letters"},
		{"${secret:1A}", "${secret:NAME} takes a secret name"},
		{"${secret:A-B}", "${secret:NAME} takes a secret name"},
		{"${secret:" + strings.Repeat("A", 129) + "}", "${secret:NAME} takes a secret name of 1 to 128"},
		{"${vault:A}", "${NAME} takes a variable name of letters, digits and '_', and ${secret:NAME} a stored secret's"},
		{"${secret:A", "unterminated reference at byte 1: write ${NAME} or ${secret:NAME}"},
	} {
		_, err := parseRefs(tt.value)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("parseRefs(%q) = %v, want %q", tt.value, err, tt.err)
		}
	}
}

// TestEmbeddingsSecretKey: settings.embeddings.apiKey may name a stored
// secret too.
func TestEmbeddingsSecretKey(t *testing.T) {
	store := storeOf(t, map[string]string{"EMB": "sk-emb-canary-4411"})
	r, err := (&Embeddings{BaseURL: "http://127.0.0.1:1/v1", APIKey: "${secret:EMB}"}).Resolve(Lookup{Secrets: store})
	if err != nil || r.APIKey.Reveal() != "sk-emb-canary-4411" {
		t.Fatalf("Resolve = %v", err)
	}
	if got := r.Redact("echo sk-emb-canary-4411"); got != "echo [redacted]" {
		t.Errorf("Redact = %q", got)
	}
	_, err = (&Embeddings{BaseURL: "http://127.0.0.1:1/v1", APIKey: "${secret:NONE}"}).Resolve(Lookup{Secrets: store})
	if err == nil || err.Error() != "settings.embeddings.apiKey: secret NONE is not in the credential store (file) or is empty (hint: switchboard secret set NONE)" {
		t.Errorf("Resolve with a missing secret = %v", err)
	}
}

// TestLiteralHints: a literal credential's error says how to fix it: in a
// file of one's own, store it and write ${secret:NAME}; in a host's file,
// let import move it.
func TestLiteralHints(t *testing.T) {
	_, problems, _ := decode(KindUser, srv(`{"command": "x", "env": {"GITHUB_TOKEN": "ghp_literal0123"}}`))
	want := "hint: store it with switchboard secret set GITHUB_TOKEN and write ${secret:GITHUB_TOKEN} instead"
	if len(problems) != 1 || !strings.HasSuffix(problems[0].Message, want) {
		t.Errorf("problems %v, want one ending %q", problems, want)
	}
	_, problems, _ = decode(KindUser, `{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer x0123"}}}}`)
	want = `hint: store it with switchboard secret set API_TOKEN and write "Bearer ${secret:API_TOKEN}" instead`
	if len(problems) != 1 || !strings.HasSuffix(problems[0].Message, want) {
		t.Errorf("problems %v, want one ending %q", problems, want)
	}
	_, probs := importServers(Source{Kind: KindImport, Path: "/h.json", Host: "cursor"}, map[string]any{"s": map[string]any{"command": "x", "env": map[string]any{"API_KEY": "k0123"}}})
	want = "hint: switchboard import --from cursor --write --move-secrets moves it into the credential store (server skipped)"
	if len(probs) != 1 || !strings.HasSuffix(probs[0].Message, want) {
		t.Errorf("problems %v, want one ending %q", probs, want)
	}
}

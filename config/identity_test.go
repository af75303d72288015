package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSettingsIdentity: settings.identity is decoded strictly, with
// errors that name the field and say what to write.
func TestSettingsIdentity(t *testing.T) {
	const base = `"issuer": "https://login.example.com", "audience": "https://sb.example.com/mcp"`
	cases := []struct {
		name, settings string
		want           *Identity
		problem        string
	}{
		{"absent", `{}`, nil, ""},
		{"minimal", `{"identity": {` + base + `}}`, &Identity{Issuer: "https://login.example.com", Audience: "https://sb.example.com/mcp", GroupsClaim: "groups"}, ""},
		{"full", `{"identity": {` + base + `, "jwksUrl": "http://127.0.0.1:9/keys", "groupsClaim": "roles", "adminGroup": "ops",
			"rules": [{"group": "dev", "tools": ["mcp__github__*"]}]}}`,
			&Identity{Issuer: "https://login.example.com", Audience: "https://sb.example.com/mcp", JWKSURL: "http://127.0.0.1:9/keys", GroupsClaim: "roles", AdminGroup: "ops",
				Rules: []IdentityRule{{Group: "dev", Tools: []string{"mcp__github__*"}}}}, ""},
		{"empty rules deny all", `{"identity": {` + base + `, "rules": []}}`, &Identity{Issuer: "https://login.example.com", Audience: "https://sb.example.com/mcp", GroupsClaim: "groups", Rules: []IdentityRule{}}, ""},
		{"no issuer", `{"identity": {"audience": "https://sb.example.com/mcp"}}`, nil, `settings.identity: needs "issuer"`},
		{"no audience", `{"identity": {"issuer": "https://login.example.com"}}`, nil, `settings.identity: needs "audience"`},
		{"http issuer off loopback", `{"identity": {"issuer": "http://login.example.com", "audience": "https://sb.example.com/mcp"}}`, nil, "settings.identity.issuer: must be an https URL"},
		{"bad pattern", `{"identity": {` + base + `, "rules": [{"group": "dev", "tools": ["github"]}]}}`, nil, "settings.identity.rules[0].tools[0]: must name a server"},
		{"rule without group", `{"identity": {` + base + `, "rules": [{"tools": ["mcp__a__*"]}]}}`, nil, `settings.identity.rules[0]: needs "group"`},
		{"unknown field", `{"identity": {` + base + `, "scopes": ["x"]}}`, nil, "scopes"},
		{"a rule's bad approve", `{"identity": {` + base + `, "rules": [{"group": "dev", "tools": ["mcp__a__*"], "approve": "sometimes"}]}}`, nil, `settings.identity.rules[0].approve: must be "never", "always", "destructive" or an array`},
		{"a rule's approvers empty", `{"identity": {` + base + `, "rules": [{"group": "dev", "tools": ["mcp__a__*"], "approve": {"when": "always", "approvers": []}}]}}`, nil, `settings.identity.rules[0].approve.approvers: must name at least one group`},
		{"a rule's unknown field", `{"identity": {` + base + `, "rules": [{"group": "dev", "tools": ["mcp__a__*"], "ask": true}]}}`, nil, `unknown field "ask" (known fields: group, tools, approve)`},
		{"introspection", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "${GW_SECRET}"}}}`,
			&Identity{Issuer: "https://login.example.com", Audience: "https://sb.example.com/mcp", GroupsClaim: "groups", Introspection: &Introspection{ClientID: "gw", ClientSecret: "${GW_SECRET}"}}, ""},
		{"introspection with url", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "${GW_SECRET}", "url": "https://login.example.com/introspect"}}}`,
			&Identity{Issuer: "https://login.example.com", Audience: "https://sb.example.com/mcp", GroupsClaim: "groups", Introspection: &Introspection{URL: "https://login.example.com/introspect", ClientID: "gw", ClientSecret: "${GW_SECRET}"}}, ""},
		{"introspection literal secret", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "canary-introspection-secret"}}}`, nil,
			"settings.identity.introspection.clientSecret: must be one ${VAR} reference to the secret of the client the gateway introspects as"},
		{"introspection secret of the store", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "${secret:GW}"}}}`, nil,
			"settings.identity.introspection.clientSecret: must be one ${VAR} reference"},
		{"introspection without client", `{"identity": {` + base + `, "introspection": {"clientSecret": "${GW_SECRET}"}}}`, nil, `settings.identity.introspection: needs "clientId"`},
		{"introspection without secret", `{"identity": {` + base + `, "introspection": {"clientId": "gw"}}}`, nil, `settings.identity.introspection: needs "clientSecret"`},
		{"introspection http url off loopback", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "${S}", "url": "http://login.example.com/introspect"}}}`, nil,
			"settings.identity.introspection.url: must be an https URL"},
		{"introspection unknown field", `{"identity": {` + base + `, "introspection": {"clientId": "gw", "clientSecret": "${S}", "client_secret": "x"}}}`, nil,
			`unknown field "client_secret" (known fields: clientId, clientSecret, url)`},
		{"introspection not an object", `{"identity": {` + base + `, "introspection": true}}`, nil, "settings.identity.introspection must be an object, not a boolean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Dirs{Home: t.TempDir()}
			os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
			if err := os.WriteFile(d.UserFile(), []byte(`{"settings": `+c.settings+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := Load(d)
			if c.want != nil {
				if diff := cmp.Diff(c.want, cfg.Settings.Identity); diff != "" {
					t.Errorf("Identity (-want +got):\n%s", diff)
				}
			}
			var problems []string
			for _, p := range cfg.Problems {
				problems = append(problems, p.Error())
			}
			all := strings.Join(problems, "\n")
			if strings.Contains(all, "canary") {
				t.Errorf("a problem repeats the secret: %q", all)
			}
			if c.problem == "" && all != "" || c.problem != "" && !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want one with %q", all, c.problem)
			}
		})
	}
}

// TestIntrospectionSecret: the secret is looked up when serving; an unset
// variable is named, and no value is shown.
func TestIntrospectionSecret(t *testing.T) {
	in := &Introspection{ClientID: "gw", ClientSecret: "${GW_SECRET}"}
	env := func(v map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { s, ok := v[k]; return s, ok }
	}
	if s, err := in.Secret(env(map[string]string{"GW_SECRET": "s3"})); err != nil || s != "s3" {
		t.Errorf("Secret = %q, %v; want s3", s, err)
	}
	_, err := in.Secret(env(nil))
	if err == nil || !strings.Contains(err.Error(), "settings.identity.introspection.clientSecret: the variable GW_SECRET is not set") {
		t.Errorf("unset: got %v", err)
	}
}

// TestIdentityGrants: no rules grant everything; rules grant the union of
// a user's groups' tools, and nothing to a user of no ruled group.
func TestIdentityGrantsOf(t *testing.T) {
	id := &Identity{Rules: []IdentityRule{{Group: "a", Tools: []string{"mcp__x__*"}}, {Group: "b", Tools: []string{"mcp__y__get_*"}}}}
	if g, ruled := (&Identity{}).Grants([]string{"a"}); ruled || g != nil {
		t.Errorf("no rules: %v %v, want nil false", g, ruled)
	}
	if g, _ := id.Grants([]string{"a", "b"}); !cmp.Equal(g, []string{"mcp__x__*", "mcp__y__get_*"}) {
		t.Errorf("a and b: %v", g)
	}
	if g, ruled := id.Grants([]string{"c"}); !ruled || len(g) != 0 || g == nil {
		t.Errorf("c: %#v %v, want [] true (deny all)", g, ruled)
	}
}

// TestIdentityApprovalFor: a rule's approve applies to what it grants, to
// its group; grants add up and the freest wins (a rule of the user's that
// grants the tool without approve means none), else the first that grants
// it with one applies; a tool no rule of theirs grants has none.
func TestIdentityApprovalFor(t *testing.T) {
	always := &Approval{Mode: ApproveAlways, Path: "first"}
	writes := &Approval{Mode: ApproveTools, Tools: []string{"write_*"}, Path: "second"}
	id := &Identity{Rules: []IdentityRule{
		{Group: "interns", Tools: []string{"mcp__github__*"}, Approve: always},
		{Group: "contractors", Tools: []string{"mcp__github__*", "mcp__db__*"}, Approve: writes},
		{Group: "seniors", Tools: []string{"mcp__github__*"}},
	}}
	for _, c := range []struct {
		groups       []string
		server, tool string
		want         string // the rule's Path; "" for none
	}{
		{[]string{"interns"}, "github", "get_issue", "first"},
		{[]string{"interns", "contractors"}, "github", "get_issue", "first"},
		{[]string{"contractors", "interns"}, "github", "get_issue", "first"}, // the rules' order, not the groups'
		{[]string{"contractors"}, "db", "query", "second"},
		{[]string{"interns", "seniors"}, "github", "get_issue", ""},
		{[]string{"interns"}, "db", "query", ""}, // not granted: the allow list refuses it
		{[]string{"seniors"}, "github", "delete_repo", ""},
		{nil, "github", "get_issue", ""},
	} {
		got, ok := id.ApprovalFor(c.groups, c.server, c.tool)
		if ok != (c.want != "") || got.Path != c.want {
			t.Errorf("%v calling %s/%s: %q %v, want %q", c.groups, c.server, c.tool, got.Path, ok, c.want)
		}
	}
	if _, ok := (*Identity)(nil).ApprovalFor([]string{"interns"}, "github", "x"); ok {
		t.Error("no identity: a rule")
	}
}

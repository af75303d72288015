package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Identity is settings.identity: serve --http as an OAuth resource server
// (docs/team.md). Clients present access tokens that the team's
// authorization server (Issuer) issued for this gateway (Audience); the
// token's subject, client and groups name the user, and Rules say what
// each group may use.
type Identity struct {
	// Issuer is the authorization server's issuer URL, as its tokens'
	// "iss" claim and its discovery document say it.
	Issuer string
	// Audience is this gateway's resource URL (https://host/mcp): a token
	// must name it in "aud". It is the resource of the gateway's Protected
	// Resource Metadata (RFC 9728).
	Audience string
	// JWKSURL is where the issuer's signing keys are; "" reads it from
	// the issuer's discovery document.
	JWKSURL string
	// GroupsClaim is the claim that lists a user's groups. Default
	// DefaultGroupsClaim.
	GroupsClaim string
	// AdminGroup is the group whose members may use /admin/*; "" is no
	// one.
	AdminGroup string
	// Rules grant tools to groups. Nil: every signed-in user may use
	// every tool. Set (even empty): a user may use only the tools a rule
	// of one of their groups grants (deny by default).
	Rules []IdentityRule
	// Introspection, if set, lets clients present opaque access tokens,
	// which the gateway asks the issuer about (RFC 7662). Nil: only JWT
	// access tokens are taken.
	Introspection *Introspection
}

// Introspection is settings.identity.introspection: how the gateway asks
// the authorization server whether an opaque access token is active
// (token introspection, RFC 7662). It authenticates as a client of its
// own (RFC 7662 section 2.1, client_secret_basic).
type Introspection struct {
	// URL is the introspection endpoint; "" reads it from the issuer's
	// discovery document (introspection_endpoint).
	URL string
	// ClientID is the client the gateway introspects as.
	ClientID string
	// ClientSecret is one ${VAR} reference to that client's secret,
	// never the secret itself (see Secret).
	ClientSecret string
}

// IdentityRule grants a group tools: patterns written mcp__SERVER__GLOB,
// as settings.includeTools writes them.
type IdentityRule struct {
	Group string
	Tools []string
	// Approve, when set, is the approval rule of the calls the rule grants
	// (the forms of a server's "approve"), for members of Group: a grant
	// that asks first. See Identity.ApprovalFor.
	Approve *Approval
}

// DefaultGroupsClaim is the claim Identity.GroupsClaim defaults to.
const DefaultGroupsClaim = "groups"

var identityFields = []string{"issuer", "audience", "jwksUrl", "groupsClaim", "adminGroup", "rules", "introspection"}

var introspectionFields = []string{"clientId", "clientSecret", "url"}

// identity decodes settings.identity. Like settings.store, it belongs in
// the user's own file or one named with --config: a project must not
// change who may sign in or what they may use.
func (d *decoder) identity(v *hujson.Value, path string) *Identity {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	if d.src.InProject() {
		d.errorf(v, path, "belongs in your own configuration file, not a project's: a project cannot change who may sign in")
		return nil
	}
	id := &Identity{GroupsClaim: DefaultGroupsClaim}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "issuer":
			id.Issuer = d.identityURL(m.value, p, "the authorization server's issuer, such as \"https://login.example.com/realms/team\"")
		case "audience":
			id.Audience = d.identityURL(m.value, p, "this gateway's resource URL, such as \"https://switchboard.example.com/mcp\"")
		case "jwksUrl":
			id.JWKSURL = d.identityURL(m.value, p, "the issuer's signing keys, such as \"https://login.example.com/keys\"")
		case "groupsClaim":
			if s, ok := d.str(m.value, p); ok && s != "" {
				id.GroupsClaim = s
			}
		case "adminGroup":
			id.AdminGroup, _ = d.str(m.value, p)
		case "rules":
			id.Rules = d.identityRules(m.value, p)
		case "introspection":
			id.Introspection = d.introspection(m.value, p)
		default:
			d.unknown(m.value, path, m.key, identityFields)
		}
	}
	switch {
	case id.Issuer == "":
		d.errorf(v, path, `needs "issuer": the authorization server's issuer URL, as its tokens' "iss" claim names it`)
		return nil
	case id.Audience == "":
		d.errorf(v, path, `needs "audience": this gateway's resource URL (https://HOST/mcp), which tokens must name in "aud"`)
		return nil
	}
	return id
}

// introspection decodes settings.identity.introspection: {"clientId":
// ID, "clientSecret": "${VAR}"} and an optional "url".
func (d *decoder) introspection(v *hujson.Value, path string) *Introspection {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	in := &Introspection{}
	secretGiven := false // a bad one is reported alone
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "url":
			in.URL = d.identityURL(m.value, p, "the issuer's introspection endpoint, such as \"https://login.example.com/oauth/introspect\"")
		case "clientId":
			in.ClientID, _ = d.nonEmpty(m.value, p)
		case "clientSecret":
			secretGiven = true
			in.ClientSecret, _ = d.envReference(m.value, p, "the secret of the client the gateway introspects as, such as ${SWITCHBOARD_INTROSPECTION_SECRET}")
		default:
			d.unknown(m.value, path, m.key, introspectionFields)
		}
	}
	switch {
	case in.ClientID == "":
		d.errorf(v, path, `needs "clientId": the client the gateway authenticates as to the issuer's introspection endpoint (register one for the gateway at the authorization server)`)
		return nil
	case in.ClientSecret == "":
		if !secretGiven {
			d.errorf(v, path, `needs "clientSecret": a reference to that client's secret, such as "${SWITCHBOARD_INTROSPECTION_SECRET}"`)
		}
		return nil
	}
	return in
}

// Secret returns the client secret in.ClientSecret refers to, looked up
// with env. An unset variable is an error naming it, never a value.
func (in *Introspection) Secret(env func(string) (string, bool)) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(in.ClientSecret, "${"), "}")
	v, _ := env(name)
	if v == "" {
		return "", fmt.Errorf("settings.identity.introspection.clientSecret: the variable %s is not set (hint: set it, in the environment of switchboard serve, to the secret of the client %q)", name, in.ClientID)
	}
	return v, nil
}

// identityURL decodes a URL of settings.identity: https, or http to a
// loopback host (a provider on the same machine, as in tests).
func (d *decoder) identityURL(v *hujson.Value, path, what string) string {
	s, ok := d.str(v, path)
	if !ok {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		d.errorf(v, path, "must be an absolute URL without query or fragment: %s, not %q", what, s)
		return ""
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		d.errorf(v, path, "must be an https URL (http only to a loopback host): %s, not %q", what, s)
		return ""
	}
	return s
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// identityRules decodes settings.identity.rules: [{"group": G, "tools":
// [mcp__SERVER__GLOB, ...]}, ...].
func (d *decoder) identityRules(v *hujson.Value, path string) []IdentityRule {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		d.errorf(v, path, `must be a list of rules such as [{"group": "dev", "tools": ["mcp__github__*"]}], not %s`, kindName(v))
		return nil
	}
	rules := []IdentityRule{}
	for i := range arr.Elements {
		e := &arr.Elements[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := d.object(e, p)
		if !ok {
			continue
		}
		var r IdentityRule
		for _, m := range d.members(obj, p) {
			mp := joinPath(p, m.key)
			switch m.key {
			case "group":
				r.Group, _ = d.str(m.value, mp)
			case "tools":
				list, _ := d.strings(m.value, mp)
				for j, pattern := range list {
					server, glob, ok := SplitToolPattern(pattern)
					if !ok || glob == "" || server == "*" {
						d.errorf(m.value, fmt.Sprintf("%s[%d]", mp, j), `must name a server and a glob of its tools as mcp__SERVER__GLOB (mcp__github__* for every tool of github, mcp__github__get_* for some), not %q`, pattern)
						continue
					}
					r.Tools = append(r.Tools, pattern)
				}
			case "approve":
				r.Approve = d.approval(m.value, mp)
			default:
				d.unknown(m.value, p, m.key, []string{"group", "tools", "approve"})
			}
		}
		if r.Group == "" {
			d.errorf(e, p, `needs "group": the group (a value of the groups claim) the rule grants tools to`)
			continue
		}
		rules = append(rules, r)
	}
	return rules
}

// Grants returns the tool patterns (mcp__SERVER__GLOB) that the rules
// give a member of groups, and whether rules apply at all: with no rules,
// every tool is allowed and grants is nil.
func (id *Identity) Grants(groups []string) (grants []string, ruled bool) {
	if id == nil || id.Rules == nil {
		return nil, false
	}
	grants = []string{}
	for _, r := range id.Rules {
		if slices.Contains(groups, r.Group) {
			grants = append(grants, r.Tools...)
		}
	}
	return grants, true
}

// ApprovalFor returns the approval rule the rules put on a member of
// groups calling server's tool, and whether there is one. Grants add up,
// and the freest wins: a rule of theirs that grants the tool without an
// approval rule means none; otherwise the first of theirs that grants it
// with one applies. A server's own "approve" applies besides.
func (id *Identity) ApprovalFor(groups []string, server, tool string) (Approval, bool) {
	if id == nil {
		return Approval{}, false
	}
	var first *Approval
	for _, r := range id.Rules {
		if !slices.Contains(groups, r.Group) || !slices.ContainsFunc(r.Tools, func(p string) bool {
			srv, glob, ok := SplitToolPattern(p)
			return ok && srv == server && Glob(glob, tool)
		}) {
			continue
		}
		if r.Approve == nil || !r.Approve.Set() {
			return Approval{}, false
		}
		if first == nil {
			first = r.Approve
		}
	}
	if first == nil {
		return Approval{}, false
	}
	return *first, true
}

package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// OAuth is the oauth field of an HTTP server's definition. A server without
// one logs in with OAuth when it asks for authorization, with the defaults
// (dynamic registration, the scopes the server asks for); "oauth": false
// turns OAuth off.
type OAuth struct {
	Disabled bool // "oauth": false

	// ClientID is a client registered with the authorization server in
	// advance; ClientSecret is its secret, a reference such as
	// ${LINEAR_CLIENT_SECRET} as written (resolved by [Server.Resolve]).
	ClientID     string
	ClientSecret string
	// ClientKey, instead of ClientSecret, is a reference to the PEM
	// private key the client authenticates with (private_key_jwt), for
	// the client_credentials and token_exchange grants.
	ClientKey string
	// Scopes replace the scopes the server's challenge or metadata
	// suggest.
	Scopes []string
	// RedirectPort is the loopback port of the redirect URI, for a client
	// registered with a fixed one; 0 picks a free port.
	RedirectPort int
	// ClientMetadataURL is an https URL of a client ID metadata document,
	// used as the client ID where the authorization server supports them.
	ClientMetadataURL string
	// Grant is GrantAuthorizationCode (the default),
	// GrantClientCredentials or GrantTokenExchange.
	Grant string
	// Audience is the audience parameter of a token exchange (RFC 8693
	// section 2.1), sent besides the resource parameter: the name the
	// authorization server knows the server by, where that is not its URL.
	Audience string
}

// OAuth grants.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantTokenExchange exchanges the signed-in user's own access token
	// to the gateway for a token to the server (RFC 8693): a user of a
	// per-user server then needs no second login (docs/auth.md).
	GrantTokenExchange = "token_exchange"
)

var oauthFields = []string{"clientId", "clientSecret", "clientKey", "scopes", "redirectPort", "clientMetadataUrl", "grant", "audience"}

// OAuthEnabled reports whether the server may log in with OAuth: an HTTP
// server without "oauth": false and without an Authorization header of its
// own (a server given a static token is not sent to a browser when it
// refuses it).
func (s *Server) OAuthEnabled() bool {
	if s.Type == TransportStdio || s.Type == TransportSocket || s.Type == TransportInProcess || (s.OAuth != nil && s.OAuth.Disabled) {
		return false
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// UserCredentials reports whether each signed-in user has their own OAuth
// tokens for the server, stored under their subject, when the gateway
// serves signed-in users (identity: serve --http with settings.identity):
// a server that logs in with OAuth, unless it says "perUser": false, which
// keeps one shared service login. Without identity, there are no users,
// and every server has one login.
func (s *Server) UserCredentials(identity bool) bool {
	if !identity || !s.OAuthEnabled() {
		return false
	}
	if s.PerUser != nil {
		return *s.PerUser
	}
	return identity
}

// oauth decodes the oauth field: false, true (the defaults) or an object.
// Other hosts' spellings are accepted in their files: callbackPort for
// redirectPort, and scopes as one space-separated string.
func (d *decoder) oauth(r *rawServer, v *hujson.Value, path string) {
	if lit, ok := v.Value.(hujson.Literal); ok && (lit.Kind() == 't' || lit.Kind() == 'f') {
		r.OAuth = &OAuth{Disabled: !lit.Bool()}
		return
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		d.errorf(v, path, "must be false or an object with %s, not %s", strings.Join(oauthFields, ", "), kindName(v))
		return
	}
	obj, _ := d.object(v, path)
	o := &OAuth{}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch key := m.key; {
		case key == "clientId":
			o.ClientID, _ = d.nonEmpty(m.value, p)
		case key == "clientSecret":
			o.ClientSecret, _ = d.nonEmpty(m.value, p)
		case key == "clientKey":
			o.ClientKey, _ = d.nonEmpty(m.value, p)
		case key == "scopes":
			o.Scopes = d.scopes(m.value, p)
		case key == "redirectPort" || (key == "callbackPort" && !d.strict):
			if n, ok := d.integer(m.value, p, 1, 65535); ok {
				o.RedirectPort = int(n)
			}
		case key == "clientMetadataUrl":
			if u, ok := d.str(m.value, p); ok {
				o.ClientMetadataURL = u
				if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || pu.Host == "" || strings.Trim(pu.Path, "/") == "" {
					d.errorf(m.value, p, "must be an https URL with a path, such as https://example.com/switchboard.json (a client ID metadata document)")
				}
			}
		case key == "grant":
			if g, ok := d.str(m.value, p); ok {
				o.Grant = g
				if g != GrantAuthorizationCode && g != GrantClientCredentials && g != GrantTokenExchange {
					d.errorf(m.value, p, `must be %q, %q or %q, not %q`, GrantAuthorizationCode, GrantClientCredentials, GrantTokenExchange, truncate(g, 40))
				}
			}
		case key == "audience":
			o.Audience, _ = d.nonEmpty(m.value, p)
		default:
			d.unknown(m.value, path, key, oauthFields)
		}
	}
	r.OAuth = o
}

func (d *decoder) nonEmpty(v *hujson.Value, path string) (string, bool) {
	s, ok := d.str(v, path)
	if ok && s == "" {
		d.errorf(v, path, "must not be empty")
		return "", false
	}
	return s, ok
}

// scopes decodes an array of scopes; tolerant files may give one string of
// space-separated scopes, as some hosts do.
func (d *decoder) scopes(v *hujson.Value, path string) []string {
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '"' && !d.strict {
		return strings.Fields(lit.String())
	}
	s, _ := d.strings(v, path)
	for _, sc := range s {
		if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
			d.errorf(v, path, "each scope must be a non-empty word without spaces or quotes, not %q", truncate(sc, 40))
			return nil
		}
	}
	return s
}

// checkOAuth validates the oauth field with the rest of the definition:
// it belongs to HTTP servers, clientSecret and clientKey are references,
// and the client_credentials grant has a client and a secret or key.
func (d *decoder) checkOAuth(r *rawServer, v *hujson.Value, path string) bool {
	o := r.OAuth
	if o == nil || o.Disabled {
		return true
	}
	p := joinPath(path, "oauth")
	switch {
	case r.Type == TransportStdio || r.Type == TransportSocket:
		d.errorf(v, p, `"oauth" belongs to HTTP servers, not to a %s server`, r.Type)
		return false
	case o.ClientSecret != "" && o.ClientID == "":
		d.errorf(v, p, `has "clientSecret" without "clientId"`)
		return false
	case o.ClientKey != "" && o.ClientID == "":
		d.errorf(v, p, `has "clientKey" without "clientId"`)
		return false
	case o.ClientKey != "" && o.ClientSecret != "":
		d.errorf(v, p, `has both "clientSecret" and "clientKey": the client authenticates with one of them`)
		return false
	case o.ClientKey != "" && o.Grant != GrantClientCredentials && o.Grant != GrantTokenExchange:
		d.errorf(v, p, `has "clientKey", which authenticates the client_credentials and token_exchange grants only; hint: add "grant": "client_credentials"`)
		return false
	case (o.Grant == GrantClientCredentials || o.Grant == GrantTokenExchange) && (o.ClientID == "" || o.ClientSecret == "" && o.ClientKey == ""):
		d.errorf(v, p, `the %s grant needs "clientId" and "clientSecret" or "clientKey" (the gateway's client at the authorization server)`, o.Grant)
		return false
	case o.Audience != "" && o.Grant != GrantTokenExchange:
		d.errorf(v, p, `has "audience", which is a parameter of the token_exchange grant only; hint: add "grant": "token_exchange" or remove it`)
		return false
	case o.Grant == GrantTokenExchange && r.PerUser != nil && !*r.PerUser:
		d.errorf(v, p, `the token_exchange grant exchanges each signed-in user's own token, and "perUser": false makes one shared login; hint: remove "perUser": false`)
		return false
	}
	env := strings.ToUpper(strings.ReplaceAll(r.Name, "-", "_"))
	for _, f := range []struct{ field, value, example string }{
		{"clientSecret", o.ClientSecret, env + "_CLIENT_SECRET"},
		{"clientKey", o.ClientKey, env + "_CLIENT_KEY"},
	} {
		if f.value == "" {
			continue
		}
		refs, err := parseRefs(f.value)
		switch {
		case err != nil:
			d.errorf(v, joinPath(p, f.field), "%v", err)
			return false
		case hasCommand(refs):
			d.errorf(v, joinPath(p, f.field), "a ${cmd:…} reference is allowed only in env and headers values")
			return false
		case len(refs) == 0:
			d.serverError(r.Name, v, joinPath(p, f.field), "must be a reference such as ${%s}, not a literal (the value is not shown); hint: export it in your shell and write the reference instead", f.example)
		}
	}
	return true
}

// resolveOAuth resolves the references of the client secret and key into
// r.
func (s *Server) resolveOAuth(r *Resolved, expand func(path, value string) (Secret, error)) error {
	if s.OAuth == nil {
		return nil
	}
	if s.OAuth.ClientSecret != "" {
		v, err := expand(joinPath(s.Path, "oauth.clientSecret"), s.OAuth.ClientSecret)
		if err != nil {
			return err
		}
		r.OAuthClientSecret = v
	}
	if s.OAuth.ClientKey != "" {
		v, err := expand(joinPath(s.Path, "oauth.clientKey"), s.OAuth.ClientKey)
		if err != nil {
			return err
		}
		r.OAuthClientKey = v
	}
	return nil
}

// OAuthDefinition is the oauth field of a Definition: false, or the
// object.
type OAuthDefinition struct {
	ClientID          string   `json:"clientId,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	ClientKey         string   `json:"clientKey,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	RedirectPort      int      `json:"redirectPort,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
	Grant             string   `json:"grant,omitempty"`
	Audience          string   `json:"audience,omitempty"`
}

// definition returns what a Definition holds for o: nil for the defaults,
// false, or the object.
func (o *OAuth) definition() any {
	switch {
	case o == nil:
		return nil
	case o.Disabled:
		return false
	}
	if o.ClientID == "" && o.ClientSecret == "" && o.ClientKey == "" && len(o.Scopes) == 0 && o.RedirectPort == 0 && o.ClientMetadataURL == "" && o.Grant == "" && o.Audience == "" {
		return nil
	}
	return &OAuthDefinition{ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientKey: o.ClientKey, Scopes: slices.Clone(o.Scopes),
		RedirectPort: o.RedirectPort, ClientMetadataURL: o.ClientMetadataURL, Grant: o.Grant, Audience: o.Audience}
}

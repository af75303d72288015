package hosts

import (
	"strings"
)

// hostOAuth says where a host keeps a remote server's OAuth settings and how
// they map to our oauth field (see HOSTS.md and docs/configuration.md).
type hostOAuth struct {
	key     string            // the entry's field: "oauth", or Cursor's "auth"
	fields  map[string]string // the host's field → ours
	enabled string            // a boolean field whose false turns OAuth off (Gemini)
	lost    map[string]string // fields we do not model → what is lost ("" drops silently)
}

const lostDiscovered = "Switchboard discovers the authorization server's endpoints from the server itself"

var (
	claudeCodeOAuth = &hostOAuth{key: "oauth",
		fields: map[string]string{"clientId": "clientId", "callbackPort": "redirectPort", "scopes": "scopes"},
		lost:   map[string]string{"authServerMetadataUrl": lostDiscovered}}
	cursorOAuth = &hostOAuth{key: "auth",
		fields: map[string]string{"CLIENT_ID": "clientId", "CLIENT_SECRET": "clientSecret", "scopes": "scopes"}}
	vscodeOAuth = &hostOAuth{key: "oauth",
		fields: map[string]string{"clientId": "clientId"},
		lost:   map[string]string{"enterpriseManaged": "enterprise-managed authorization is not supported"}}
	geminiOAuth = &hostOAuth{key: "oauth", enabled: "enabled",
		fields: map[string]string{"clientId": "clientId", "clientSecret": "clientSecret", "scopes": "scopes"},
		lost: map[string]string{"authorizationUrl": lostDiscovered, "tokenUrl": lostDiscovered,
			"redirectUri":    "Switchboard's redirect URI is http://127.0.0.1:PORT/callback (set oauth.redirectPort for a fixed port)",
			"tokenParamName": "", "audiences": "audiences are not sent"}}
	opencodeOAuth = &hostOAuth{key: "oauth",
		fields: map[string]string{"clientId": "clientId", "clientSecret": "clientSecret", "scope": "scopes"}}
)

// oauth maps the host's OAuth value v, at path, into e's oauth field:
// false (or Gemini's enabled: false) turns OAuth off, true and an empty
// object leave the defaults, and an object's fields map to ours, values
// translated like any other (a client secret must come out a reference).
func (o *hostOAuth) oauth(f *File, e *Entry, host, path string, v any, vars varSyntax) {
	switch v := v.(type) {
	case bool:
		if !v {
			e.set("oauth", false, o.key)
		}
		return
	case map[string]any:
		out := map[string]any{}
		for _, k := range sortedKeys(v) {
			val, p := v[k], joinPath(path, k)
			ours, mapped := o.fields[k]
			switch {
			case k == o.enabled && o.enabled != "":
				if b, ok := val.(bool); ok && !b {
					e.set("oauth", false, o.key+"."+k)
					return
				}
			case mapped && ours == "scopes":
				out[ours] = scopesValue(val)
				e.origin("oauth."+ours, o.key+"."+k)
			case mapped:
				out[ours] = vars.str(f, e, host, p, val)
				e.origin("oauth."+ours, o.key+"."+k)
			default:
				if lost, known := o.lost[k]; !known {
					f.warnf(e.Name, path, "unknown field %q ignored", k)
				} else if lost != "" {
					f.warnf(e.Name, p, "%s is not supported: %s", k, lost)
				}
			}
		}
		if len(out) > 0 {
			e.set("oauth", out, o.key)
		}
	default:
		e.set("oauth", v, o.key) // validation says what is wrong with it
	}
}

// scopesValue turns a host's scopes, one space-separated string or a list,
// into our list.
func scopesValue(v any) any {
	if s, ok := v.(string); ok {
		out := []any{}
		for _, sc := range strings.Fields(s) {
			out = append(out, sc)
		}
		return out
	}
	return v
}

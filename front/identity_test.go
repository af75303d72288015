package front

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// identityGateway serves two fixture servers, a and b, with
// settings.identity naming a real OpenID provider (idptest): group alpha
// may use every tool of a, beta only b's echo, admins may use /admin/.
type identityGateway struct {
	g     *testGateway
	idp   *idptest.IdP
	url   string // the resource: URL/mcp
	calls *switchboard.CallLog
}

func newIdentityGateway(t *testing.T) *identityGateway {
	t.Helper()
	return newIdentityGatewayWith(t, nil, false)
}

// newIdentityGatewayWith is newIdentityGateway with more settings, served
// stateless or not.
func newIdentityGatewayWith(t *testing.T, more map[string]any, stateless bool) *identityGateway {
	t.Helper()
	return newIdentityGatewayOpts(t, identityOpts{more: more, stateless: stateless})
}

// identityOpts are what newIdentityGatewayOpts makes besides its usual.
type identityOpts struct {
	more      map[string]any
	stateless bool
	servers   map[string]def // besides a and b
	rules     []any          // replace the rules, when set
	engine    switchboard.Options
	// idp and audience, when set, are a provider and a resource URL that
	// several gateways share (replicas behind one address); else each
	// gateway has its own provider, for its own URL.
	idp      *idptest.IdP
	audience string
	// introspection, when set, is settings.identity.introspection for
	// the provider's issuer.
	introspection func(issuer string) map[string]any
	logger        *slog.Logger // the front's, when set
}

func newIdentityGatewayOpts(t *testing.T, o identityOpts) *identityGateway {
	t.Helper()
	more, stateless := o.more, o.stateless
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp, audience := o.idp, o.audience
	if idp == nil {
		audience = base + "/mcp"
		idp = idptest.Start(t, audience)
	}
	calls := switchboard.NewCallLog(0)
	settings := map[string]any{
		"identity": map[string]any{
			"issuer":     idp.Issuer,
			"audience":   audience,
			"adminGroup": "admins",
			"rules": []any{
				map[string]any{"group": "alpha", "tools": []string{"mcp__a__*"}},
				map[string]any{"group": "beta", "tools": []string{"mcp__b__echo"}},
			},
		},
	}
	if o.rules != nil {
		settings["identity"].(map[string]any)["rules"] = o.rules
	}
	if o.introspection != nil {
		settings["identity"].(map[string]any)["introspection"] = o.introspection(idp.Issuer)
	}
	for k, v := range more {
		settings[k] = v
	}
	servers := map[string]def{"a": fixture(), "b": fixture()}
	maps.Copy(servers, o.servers)
	eng := o.engine
	eng.OnCall = calls.Add
	g := newGatewayWith(t, servers, settings, Options{Engine: eng, Logger: o.logger})
	v := g.srv.cfg.Settings.Identity
	h, err := g.srv.Handler(HTTPOptions{Identity: v, Stateless: stateless, Metrics: g.srv.opts.Metrics, Admin: &Admin{Calls: calls, Version: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return &identityGateway{g: g, idp: idp, url: base, calls: calls}
}

// bearerTransport adds an access token to each request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs connects a go-sdk client over Streamable HTTP with token.
func (ig *identityGateway) connectAs(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	return ig.connectAsWith(t, token, nil)
}

// connectAsWith is connectAs with client options.
func (ig *identityGateway) connectAsWith(t *testing.T, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: ig.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "identity-test-client", Version: "1"}, opts).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestIdentityGrants: each user, signed in at a real OpenID provider,
// sees in search and may call only the tools the rules grant their
// groups; a machine client in no ruled group gets nothing; the audit
// trail names the user and their client.
func TestIdentityGrants(t *testing.T) {
	t.Run("stateful", func(t *testing.T) { testIdentityGrants(t, false) })
	t.Run("stateless", func(t *testing.T) { testIdentityGrants(t, true) })
}

func testIdentityGrants(t *testing.T, stateless bool) {
	ig := newIdentityGatewayWith(t, nil, stateless)
	alpha := ig.connectAs(t, ig.idp.Token(t, idptest.Alpha, idptest.Password))
	beta := ig.connectAs(t, ig.idp.Token(t, idptest.Beta, idptest.Password))
	robot := ig.connectAs(t, ig.idp.MachineToken(t))

	checkGrants(t, []grantCase{
		{"alpha calls a", alpha, "a", true},
		{"alpha calls b", alpha, "b", false},
		{"beta calls b", beta, "b", true},
		{"beta calls a", beta, "a", false},
		{"robot calls a", robot, "a", false},
		{"robot calls b", robot, "b", false},
	})
	search := func(cs *mcp.ClientSession) string {
		return text(call(t, cs, "mcp", map[string]any{"search": "echo"}))
	}
	if s := search(beta); strings.Contains(s, `"a"`) || strings.Contains(s, "server a") {
		t.Errorf("beta's search shows server a:\n%s", s)
	}
	if s := search(alpha); strings.Contains(s, `"b"`) || strings.Contains(s, "server b") {
		t.Errorf("alpha's search shows server b:\n%s", s)
	}

	// The audit trail names each call's user and client.
	recs, _, err := policy.ReadAudit(filepath.Join(ig.g.srv.cfg.Dirs.StateDir(), policy.AuditFile), policy.Filter{User: idptest.AlphaSub})
	if err != nil {
		t.Fatal(err)
	}
	var called bool
	for _, r := range recs {
		if r.User != idptest.AlphaSub {
			t.Errorf("filtered by user %s, got a record of %q", idptest.AlphaSub, r.User)
		}
		if r.Event == policy.EventCall && r.Server == "a" && r.Decision == "allowed" {
			called = true
			if r.ClientID != "switchboard-test" || r.Client != "identity-test-client" {
				t.Errorf("record names client id %q and client %q, want switchboard-test and identity-test-client", r.ClientID, r.Client)
			}
		}
	}
	if !called {
		t.Errorf("no audit record of alpha's call of a: %+v", recs)
	}
}

// TestIdentityToolsList: with direct tools, a user's tools/list shows the
// servers' tools the rules grant them and no other; a call of another is
// refused.
func TestIdentityToolsList(t *testing.T) {
	ig := newIdentityGatewayWith(t, map[string]any{"directTools": true}, false)
	beta := ig.connectAs(t, ig.idp.Token(t, idptest.Beta, idptest.Password))
	alpha := ig.connectAs(t, ig.idp.Token(t, idptest.Alpha, idptest.Password))
	betaTools, alphaTools := toolNames(t, beta), toolNames(t, alpha)
	if !slices.Contains(betaTools, "b_echo") || !slices.Contains(betaTools, "mcp") {
		t.Errorf("beta's tools %q lack b_echo or mcp", betaTools)
	}
	for _, name := range betaTools {
		if name != "b_echo" && name != "mcp" {
			t.Errorf("beta's tools/list shows %q, which no rule grants them", name)
		}
	}
	if !slices.Contains(alphaTools, "a_echo") || slices.ContainsFunc(alphaTools, func(n string) bool { return strings.HasPrefix(n, "b_") }) {
		t.Errorf("alpha's tools %q: want a's, none of b's", alphaTools)
	}
	if r := call(t, beta, "a_echo", map[string]any{"text": "hi"}); !r.IsError {
		t.Errorf("beta called a_echo: %s", text(r))
	}
}

// TestIdentityRefusals: a request without a token the gateway accepts is
// refused with 401 and a WWW-Authenticate whose resource_metadata leads
// a client to the Protected Resource Metadata, which names the issuer.
// Each token is the provider's own (or one of them altered): expired, for
// another audience, from another issuer, re-signed "alg: none", with a
// payload changed, signed HS256 with the provider's public key.
func TestIdentityRefusals(t *testing.T) {
	ig := newIdentityGateway(t)
	good := ig.idp.Token(t, idptest.Alpha, idptest.Password)
	other := idptest.Start(t, ig.url+"/mcp") // another issuer, the same audience

	parts := strings.Split(good, ".")
	header, payload := decodeSegment(t, parts[0]), decodeSegment(t, parts[1])
	none := encodeSegment(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + "."
	var claims map[string]any
	json.Unmarshal([]byte(payload), &claims)
	claims["sub"] = idptest.BetaSub
	claims["groups"] = []string{"beta", "admins"}
	forged, _ := json.Marshal(claims)
	tampered := parts[0] + "." + encodeSegment(string(forged)) + "." + parts[2]
	hs := hmacWithPublicKey(t, ig.idp.Issuer, header, string(forged))

	for _, tt := range []struct{ name, token string }{
		{"no token", ""},
		{"garbage", "not-a-token"},
		{"expired", ig.idp.Token(t, idptest.Alpha, idptest.Password, idptest.ScopeExpired)},
		{"wrong audience", ig.idp.Token(t, idptest.Alpha, idptest.Password, idptest.ScopeElsewhere)},
		{"wrong issuer", other.Token(t, idptest.Alpha, idptest.Password)},
		{"alg none", none},
		{"tampered", tampered},
		{"hmac with the public key", hs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/mcp", "/admin/calls", "/metrics"} {
				req, _ := http.NewRequest("POST", ig.url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
				if path != "/mcp" {
					req.Method = "GET"
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tt.token != "" {
					req.Header.Set("Authorization", "Bearer "+tt.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("%s: got %d, want 401", path, resp.StatusCode)
				}
				followMetadata(t, resp.Header.Get("WWW-Authenticate"), ig.url+"/mcp", ig.idp.Issuer)
			}
		})
	}
	// The good token passes.
	ig.connectAs(t, good)
}

// followMetadata follows a WWW-Authenticate challenge to the resource's
// metadata, as a client does, and checks it names resource and issuer.
func followMetadata(t *testing.T, challenge, resource, issuer string) {
	t.Helper()
	_, after, ok := strings.Cut(challenge, `resource_metadata="`)
	meta, _, ok2 := strings.Cut(after, `"`)
	if !strings.HasPrefix(challenge, "Bearer ") || !ok || !ok2 {
		t.Fatalf("WWW-Authenticate %q names no resource_metadata", challenge)
	}
	resp, err := http.Get(meta)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", meta, resp.StatusCode, err)
	}
	if doc.Resource != resource || !slices.Equal(doc.Servers, []string{issuer}) {
		t.Errorf("metadata names resource %q and servers %q, want %q and [%q]", doc.Resource, doc.Servers, resource, issuer)
	}
}

func decodeSegment(t *testing.T, s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func encodeSegment(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// hmacWithPublicKey signs payload HS256 with the provider's public key
// (its JWKS as published) as the secret: the key confusion attack.
func hmacWithPublicKey(t *testing.T, issuer, header, payload string) string {
	resp, err := http.Get(issuer + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	jwks, _ := io.ReadAll(resp.Body)
	var h map[string]any
	json.Unmarshal([]byte(header), &h)
	h["alg"] = "HS256"
	hb, _ := json.Marshal(h)
	signing := encodeSegment(string(hb)) + "." + encodeSegment(payload)
	mac := hmac.New(sha256.New, jwks)
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestIdentityAdmin: /admin/ is its admin group's; anyone else may read
// their own calls at /admin/calls, and no one else's.
func TestIdentityAdmin(t *testing.T) {
	ig := newIdentityGateway(t)
	alphaTok := ig.idp.Token(t, idptest.Alpha, idptest.Password) // in admins
	betaTok := ig.idp.Token(t, idptest.Beta, idptest.Password)
	echo := map[string]any{"tool": "echo", "args": map[string]any{"text": "hi"}}
	echo["server"] = "a"
	call(t, ig.connectAs(t, alphaTok), "mcp", echo)
	echo["server"] = "b"
	call(t, ig.connectAs(t, betaTok), "mcp", echo)

	get := func(token, path string) (int, []proxy.CallRecord) {
		req, _ := http.NewRequest("GET", ig.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct{ Calls []proxy.CallRecord }
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Calls
	}
	users := func(calls []proxy.CallRecord) []string {
		var out []string
		for _, c := range calls {
			out = append(out, c.User)
		}
		slices.Sort(out)
		return out
	}
	if code, calls := get(betaTok, "/admin/calls"); code != 200 || !slices.Equal(users(calls), []string{idptest.BetaSub}) {
		t.Errorf("beta's /admin/calls: %d, calls of %q; want 200 and only beta's", code, users(calls))
	}
	if code, calls := get(alphaTok, "/admin/calls"); code != 200 || !slices.Equal(users(calls), []string{idptest.AlphaSub, idptest.BetaSub}) {
		t.Errorf("admin's /admin/calls: %d, calls of %q; want 200 and everyone's", code, users(calls))
	}
	for _, path := range []string{"/admin/status", "/metrics"} {
		if code, _ := get(betaTok, path); code != http.StatusForbidden {
			t.Errorf("beta's %s: %d, want 403", path, code)
		}
		if code, _ := get(alphaTok, path); code != 200 {
			t.Errorf("admin's %s: %d, want 200", path, code)
		}
	}
}

// TestIdentityFastLane: serving with identity, a session's calls take the
// fast lane once the session is its user's, and a request on that session
// with another user's token never does: go-sdk refuses it, as it would
// without the lane, and nothing is called.
func TestIdentityFastLane(t *testing.T) {
	ig := newIdentityGatewayWith(t, nil, false)
	alphaTok := ig.idp.Token(t, idptest.Alpha, idptest.Password)
	betaTok := ig.idp.Token(t, idptest.Beta, idptest.Password)
	alpha := ig.connectAs(t, alphaTok)
	echo := map[string]any{"tool": "echo", "server": "a", "args": map[string]any{"text": "hi"}}
	for range 3 {
		if r := call(t, alpha, "mcp", echo); r.IsError || text(r) != "hi" {
			t.Fatalf("alpha's call: %s", text(r))
		}
	}
	fast := ig.g.fastCalls()
	if fast == 0 {
		t.Fatal("no call of alpha's took the fast lane")
	}
	calls := len(ig.calls.Recent())
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"echo","server":"a","args":{"text":"hijacked"}}}}`
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ig.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", alpha.ID())
	req.Header.Set("Mcp-Protocol-Version", alpha.InitializeResult().ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+betaTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || strings.Contains(string(data), "hijacked") {
		t.Errorf("beta's token on alpha's session: HTTP %d %s; want refused", resp.StatusCode, data)
	}
	if ig.g.fastCalls() != fast || len(ig.calls.Recent()) != calls {
		t.Errorf("beta's request on alpha's session was carried out (fast calls %d → %d, calls %d → %d)", fast, ig.g.fastCalls(), calls, len(ig.calls.Recent()))
	}
}

// grantCase is a call of a server's echo tool through the mcp tool, and
// whether the caller's rules let it through.
type grantCase struct {
	name   string
	cs     *mcp.ClientSession
	server string
	ok     bool
}

// checkGrants makes each call and checks that it went through, or was
// refused, as the case says.
func checkGrants(t *testing.T, cases []grantCase) {
	t.Helper()
	for _, tt := range cases {
		r := call(t, tt.cs, "mcp", map[string]any{"tool": "echo", "server": tt.server, "args": map[string]any{"text": "hi"}})
		if r.IsError == tt.ok {
			t.Errorf("%s: isError %v, want %v: %s", tt.name, r.IsError, !tt.ok, text(r))
		}
	}
}

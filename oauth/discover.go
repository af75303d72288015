package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/origin"
	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// discovery is what the metadata says about how to authorize at a server.
type discovery struct {
	resource  string   // the resource parameter (RFC 8707)
	scopes    []string // scopes_supported of the protected resource metadata
	asm       *oauthex.AuthServerMeta
	challenge []string // the scope the server's challenge asks for
}

// discover finds the authorization server of the server: from its protected
// resource metadata (RFC 9728: the challenge's resource_metadata, else the
// well-known locations), then that server's metadata (RFC 8414, then OpenID
// Connect discovery), else the 2025-03-26 fallbacks: the server's origin is
// the authorization server, with metadata at its root or the default
// endpoints /authorize, /token and /register.
func (h *Handler) discover(ctx context.Context, challenges []oauthex.Challenge) (*discovery, error) {
	d := &discovery{resource: h.cfg.URL, challenge: scopeFromChallenges(challenges)}
	prm, prmErr, err := h.protectedResource(ctx, challenges)
	if err != nil {
		return nil, h.step("reading the protected resource metadata", err)
	}
	if prm == nil {
		asm, err := h.legacyMetadata(ctx)
		if err != nil {
			if prmErr != nil {
				err = fmt.Errorf("%w (and the protected resource metadata: %v)", err, prmErr)
			}
			return nil, h.step("reading the authorization server metadata", err)
		}
		d.asm = asm
		return d, nil
	}
	d.resource, d.scopes = prm.Resource, prm.ScopesSupported
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, h.client)
	if err != nil {
		return nil, h.step("reading the authorization server metadata", err)
	}
	if asm == nil {
		// No metadata at the issuer: its default endpoints (2025-03-26),
		// which say nothing of PKCE. A client_credentials grant needs
		// none; loginFlow refuses them (see checkPKCE).
		asm = defaultEndpoints(strings.TrimSuffix(issuer, "/"))
	}
	d.asm = asm
	return d, nil
}

// protectedResource returns the server's protected resource metadata, or
// nil when it has none. A document the challenge points at must be valid;
// a failure at a well-known location is only remembered (prmErr), since
// servers of the 2025-03-26 revision have none there.
func (h *Handler) protectedResource(ctx context.Context, challenges []oauthex.Challenge) (prm *oauthex.ProtectedResourceMetadata, prmErr, err error) {
	client := h.client
	if u := resourceMetadataFromChallenges(challenges); u != "" {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, h.cfg.URL, client)
		if err != nil {
			return nil, nil, err
		}
		return prm, nil, checkPRM(prm)
	}
	for _, c := range wellKnownPRM(h.cfg.URL) {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err != nil {
			prmErr = err
			continue
		}
		return prm, nil, checkPRM(prm)
	}
	return nil, prmErr, nil
}

// checkPRM checks what oauthex does not: that the metadata names an
// authorization server (the 2025-11-25 revision requires one).
func checkPRM(prm *oauthex.ProtectedResourceMetadata) error {
	if len(prm.AuthorizationServers) == 0 {
		return errors.New("it names no authorization server")
	}
	return nil
}

type prmLocation struct{ url, resource string }

// wellKnownPRM returns where protected resource metadata may be, in order:
// at the path of the MCP endpoint, then at the root, with the resource each
// must name.
func wellKnownPRM(resource string) []prmLocation {
	u, err := url.Parse(resource)
	if err != nil {
		return nil
	}
	var out []prmLocation
	m := *u
	m.RawQuery, m.Fragment = "", ""
	if p := strings.Trim(u.Path, "/"); p != "" {
		m.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, prmLocation{m.String(), resource})
	}
	m.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	return append(out, prmLocation{m.String(), root.String()})
}

// legacyMetadata is discovery for a server without protected resource
// metadata (2025-03-26): the authorization server is at the server's
// origin. Its metadata's issuer may differ from the origin (the revision
// does not ask them to match), but it must be on the same origin: the
// server itself vouches for it. Without metadata, the default endpoints.
func (h *Handler) legacyMetadata(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(h.cfg.URL)
	if err != nil {
		return nil, err
	}
	root := u.Scheme + "://" + u.Host
	if err := httpsOrLoopback(root); err != nil {
		return nil, err
	}
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		issuer, found, err := h.peekIssuer(ctx, root+p)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if !sameOrigin(issuer, root) {
			return nil, fmt.Errorf("the metadata at %s names issuer %q, which is not on the server's origin %s", root+p, printable.Clip(issuer, 200), root)
		}
		asm, err := oauthex.GetAuthServerMeta(ctx, root+p, issuer, h.client)
		if err != nil {
			return nil, err
		}
		if asm != nil {
			return asm, nil
		}
	}
	// Without metadata, the 2025-03-26 revision's default endpoints, with
	// the PKCE S256 it requires of every authorization server.
	asm := defaultEndpoints(root)
	asm.CodeChallengeMethodsSupported = []string{"S256"}
	return asm, nil
}

// peekIssuer reads the issuer of the metadata document at u; found is false
// when there is none (an HTTP 4xx). oauthex.GetAuthServerMeta then fetches
// and checks the document in full.
func (h *Handler) peekIssuer(ctx context.Context, u string) (issuer string, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return "", false, nil
	case resp.StatusCode != http.StatusOK:
		return "", false, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return "", false, fmt.Errorf("GET %s: not a JSON metadata document: %v", u, err)
	}
	if doc.Issuer == "" {
		return "", false, fmt.Errorf("GET %s: the metadata has no issuer", u)
	}
	return doc.Issuer, true, nil
}

// defaultEndpoints are the endpoints of an authorization server without
// metadata (2025-03-26, "Fallbacks for Servers without Metadata Discovery").
func defaultEndpoints(base string) *oauthex.AuthServerMeta {
	return &oauthex.AuthServerMeta{
		Issuer:                base,
		AuthorizationEndpoint: base + "/authorize",
		TokenEndpoint:         base + "/token",
		RegistrationEndpoint:  base + "/register",
	}
}

func sameOrigin(a, b string) bool {
	oa, err1 := origin.Parse(a)
	ob, err2 := origin.Parse(b)
	return err1 == nil && err2 == nil && oa == ob
}

// httpsOrLoopback returns an error unless u is https, or http to a loopback
// address: an authorization endpoint over plain http elsewhere would send
// codes and tokens in the clear.
func httpsOrLoopback(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("bad URL %q: %v", printable.Clip(u, 200), err)
	}
	switch {
	case pu.Scheme == "https" && pu.Host != "":
		return nil
	case pu.Scheme == "http" && isLoopback(pu.Hostname()):
		return nil
	}
	return fmt.Errorf("refusing %s: OAuth endpoints must use https (plain http only on loopback)", printable.Clip(u, 200))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func resourceMetadataFromChallenges(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			return u
		}
	}
	return ""
}

// scopeFromChallenges returns the scope a Bearer challenge asks for.
func scopeFromChallenges(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

func hasBearer(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// errorFromChallenges returns the error code of a Bearer challenge.
func errorFromChallenges(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			return c.Params["error"]
		}
	}
	return ""
}

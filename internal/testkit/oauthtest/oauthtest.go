// Package oauthtest is a small OAuth 2.1 authorization server and an MCP
// server protected by it, for tests: httptest servers that follow the MCP
// authorization specification closely enough to hold a client to it.
//
// The authorization server publishes RFC 8414 metadata, registers clients
// dynamically (RFC 7591), issues codes only for PKCE S256 and the
// registered redirect URI, checks the code verifier, the resource
// parameter and client authentication, rotates refresh tokens (a used one
// is invalid), and revokes tokens (RFC 7009). Its authorization endpoint
// approves at once, as a user who clicks "allow" would: a client reaches
// the redirect by following it (see [Follow]). Tokens start with
// [CanaryPrefix], so tests can look for them where they must not be.
//
// The MCP server (an echo tool) answers 401 with a resource_metadata
// challenge without a valid token, publishes RFC 9728 metadata, and answers
// 403 insufficient_scope while a token lacks the scope it requires.
package oauthtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// CanaryPrefix starts every access and refresh token the server issues.
const CanaryPrefix = "CANARY-"

// Options configure a Server. The zero value works.
type Options struct {
	// TokenLifetime is the expires_in of access tokens. Default one hour.
	TokenLifetime time.Duration
	// NoRefresh issues no refresh tokens.
	NoRefresh bool
	// Scopes are the scopes_supported of both metadata documents.
	Scopes []string
	// RequireScope makes the MCP server answer 403 insufficient_scope to a
	// token without this scope.
	RequireScope string
	// WithholdScope is a scope the authorization server never grants,
	// though asked.
	WithholdScope string
	// RefuseScope makes the MCP server answer 403 insufficient_scope,
	// asking for RequireScope, even to a token that has it.
	RefuseScope bool
	// ClientSecret makes dynamic registration issue client secrets, and
	// the token endpoint require them (client_secret_basic).
	ClientSecret bool
	// Preregistered adds a confidential client with this ID and secret
	// (for the client_credentials grant too).
	PreregisteredID, PreregisteredSecret string
	// PreregisteredKey, instead of a secret, is the public key of the
	// preregistered client, which then authenticates with signed
	// assertions (private_key_jwt, RFC 7523): the token endpoint checks
	// their signature, issuer and subject (the client), audience (the
	// issuer), expiry, and that no jti comes twice.
	PreregisteredKey crypto.PublicKey
	// AuthorizationEndpoint replaces the authorization endpoint in the
	// metadata (to publish a hostile one).
	AuthorizationEndpoint string
	// TokenType replaces "Bearer" as the token_type of token responses.
	TokenType string
	// AdvertiseIss sets authorization_response_iss_parameter_supported;
	// Iss, when set, is the iss parameter of every redirect (RFC 9207),
	// "issuer" for the server's own issuer.
	AdvertiseIss bool
	Iss          string
	// RegistrationBody replaces the body of registration responses.
	RegistrationBody string
	// PRMResource replaces the resource of the protected resource
	// metadata.
	PRMResource string
	// SSE serves the legacy HTTP+SSE transport instead of Streamable HTTP.
	SSE bool
	// Wrap, when set, wraps the MCP server's whole handler (to make it
	// hostile once a client holds a token).
	Wrap func(http.Handler) http.Handler
}

// Server is the authorization server and the MCP server.
type Server struct {
	AS, RS *httptest.Server
	opts   Options

	mu            sync.Mutex
	clients       map[string]*asClient
	codes         map[string]*grant
	jtis          map[string]bool   // the ids of the assertions taken
	access        map[string]*grant // valid access tokens
	refresh       map[string]*grant // valid refresh tokens
	registrations int
	refreshes     int
	refreshTries  int // refresh_token grant requests, refused ones too
	codeGrants    int
	revocations   int
	lastResource  string
	lastAuthQuery url.Values
}

type asClient struct {
	id, secret string
	key        crypto.PublicKey // private_key_jwt; nil for none
	redirects  []string
}

type grant struct {
	client, scope, resource string
	challenge, redirect     string
	expiry                  time.Time
}

// New starts the servers; they stop when the test ends.
func New(t interface{ Cleanup(func()) }, opts Options) *Server {
	if opts.TokenLifetime == 0 {
		opts.TokenLifetime = time.Hour
	}
	s := &Server{opts: opts, clients: map[string]*asClient{}, codes: map[string]*grant{}, jtis: map[string]bool{},
		access: map[string]*grant{}, refresh: map[string]*grant{}}
	if opts.PreregisteredID != "" {
		s.clients[opts.PreregisteredID] = &asClient{id: opts.PreregisteredID, secret: opts.PreregisteredSecret, key: opts.PreregisteredKey}
	}
	// Unstarted, then started: the handlers read s.AS and s.RS, which must
	// be set before either server serves (else the race detector, which
	// does not see a request made by a child process, reports a race).
	s.AS = httptest.NewUnstartedServer(s.asHandler())
	rs := s.rsHandler()
	if opts.Wrap != nil {
		rs = opts.Wrap(rs)
	}
	s.RS = httptest.NewUnstartedServer(rs)
	s.AS.Start()
	s.RS.Start()
	t.Cleanup(s.RS.Close)
	t.Cleanup(s.AS.Close)
	return s
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.RS.URL + "/mcp" }

func (s *Server) asHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	return mux
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	authz := s.AS.URL + "/authorize"
	if s.opts.AuthorizationEndpoint != "" {
		authz = s.opts.AuthorizationEndpoint
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                           s.AS.URL,
		"authorization_endpoint":                           authz,
		"token_endpoint":                                   s.AS.URL + "/token",
		"registration_endpoint":                            s.AS.URL + "/register",
		"revocation_endpoint":                              s.AS.URL + "/revoke",
		"response_types_supported":                         []string{"code"},
		"grant_types_supported":                            []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":                 []string{"S256"},
		"token_endpoint_auth_methods_supported":            []string{"client_secret_basic", "private_key_jwt", "none"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256", "RS256"},
		"scopes_supported":                                 s.opts.Scopes,
		"authorization_response_iss_parameter_supported":   s.opts.AdvertiseIss,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
		return
	}
	c := &asClient{id: "client-" + rand.Text()[:10], redirects: req.RedirectURIs}
	resp := map[string]any{"client_id": c.id, "redirect_uris": c.redirects}
	if s.opts.ClientSecret {
		c.secret = "secret-" + rand.Text()
		resp["client_secret"] = c.secret
		resp["token_endpoint_auth_method"] = "client_secret_basic"
	} else {
		resp["token_endpoint_auth_method"] = "none"
	}
	s.mu.Lock()
	s.clients[c.id] = c
	s.registrations++
	s.mu.Unlock()
	if s.opts.RegistrationBody != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, s.opts.RegistrationBody)
		return
	}
	writeJSON(w, http.StatusCreated, resp)
}

// authorize approves at once: it checks the request and redirects with a
// code, or with an error where RFC 6749 says to.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastAuthQuery = q
	c := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	if c == nil || !slices.Contains(c.redirects, redirect) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	v := url.Values{"state": {q.Get("state")}}
	switch s.opts.Iss {
	case "":
	case "issuer":
		v.Set("iss", s.AS.URL)
	default:
		v.Set("iss", s.opts.Iss)
	}
	switch {
	case q.Get("response_type") != "code":
		v.Set("error", "unsupported_response_type")
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		v.Set("error", "invalid_request")
		v.Set("error_description", "PKCE S256 is required")
	default:
		code := "code-" + rand.Text()
		scope := strings.Join(slices.DeleteFunc(strings.Fields(q.Get("scope")), func(sc string) bool { return sc == s.opts.WithholdScope }), " ")
		s.codes[code] = &grant{client: c.id, scope: scope, resource: q.Get("resource"),
			challenge: q.Get("code_challenge"), redirect: redirect}
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastResource = r.PostForm.Get("resource")
	c, ok := s.clientAuth(r)
	if !ok {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	var g *grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g = s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		if g == nil || g.client != c.id || g.redirect != r.PostForm.Get("redirect_uri") || !verifies(r.PostForm.Get("code_verifier"), g.challenge) || g.resource != s.lastResource {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		s.codeGrants++
	case "refresh_token":
		s.refreshTries++
		g = s.refresh[r.PostForm.Get("refresh_token")]
		if g == nil || g.client != c.id {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		delete(s.refresh, r.PostForm.Get("refresh_token")) // rotation: a refresh token is used once
		s.refreshes++
	case "client_credentials":
		if c.secret == "" && c.key == nil {
			tokenError(w, http.StatusUnauthorized, "unauthorized_client")
			return
		}
		g = &grant{client: c.id, scope: r.PostForm.Get("scope"), resource: s.lastResource}
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	s.issue(w, g, r.PostForm.Get("grant_type") != "client_credentials")
}

// issue writes a token response for g. s.mu is held.
func (s *Server) issue(w http.ResponseWriter, g *grant, withRefresh bool) {
	at := CanaryPrefix + "access-" + rand.Text()
	ng := *g
	ng.expiry = time.Now().Add(s.opts.TokenLifetime)
	s.access[at] = &ng
	typ := "Bearer"
	if s.opts.TokenType != "" {
		typ = s.opts.TokenType
	}
	resp := map[string]any{"access_token": at, "token_type": typ, "expires_in": int(s.opts.TokenLifetime / time.Second), "scope": g.scope}
	if withRefresh && !s.opts.NoRefresh {
		rt := CanaryPrefix + "refresh-" + rand.Text()
		s.refresh[rt] = &ng
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// clientAuth authenticates the client of a token request: basic, post, or
// none for a client without a secret. s.mu is held.
func (s *Server) clientAuth(r *http.Request) (*asClient, bool) {
	if r.PostForm.Get("client_assertion_type") != "" {
		return s.assertionAuth(r)
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	if c == nil || c.secret != secret {
		return nil, false
	}
	return c, true
}

// assertionAuth authenticates a client by its signed assertion
// (private_key_jwt). s.mu is held.
func (s *Server) assertionAuth(r *http.Request) (*asClient, bool) {
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.PostForm.Get("client_secret") != "" {
		return nil, false
	}
	tok, err := jwt.ParseSigned(r.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
	if err != nil {
		return nil, false
	}
	var unverified jwt.Claims
	if tok.UnsafeClaimsWithoutVerification(&unverified) != nil {
		return nil, false
	}
	c := s.clients[unverified.Issuer]
	if c == nil || c.key == nil {
		return nil, false
	}
	if id := r.PostForm.Get("client_id"); id != "" && id != c.id {
		return nil, false
	}
	var claims jwt.Claims
	if tok.Claims(c.key, &claims) != nil {
		return nil, false
	}
	want := jwt.Expected{Issuer: c.id, Subject: c.id, AnyAudience: jwt.Audience{s.AS.URL}, Time: time.Now()}
	if claims.ValidateWithLeeway(want, 30*time.Second) != nil || claims.Expiry == nil || claims.ID == "" || s.jtis[claims.ID] {
		return nil, false
	}
	s.jtis[claims.ID] = true
	return c, true
}

func verifies(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return verifier != "" && base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clientAuth(r); !ok {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	t := r.PostForm.Get("token")
	if g, ok := s.refresh[t]; ok {
		delete(s.refresh, t)
		for at, ag := range s.access {
			if ag.client == g.client {
				delete(s.access, at)
			}
		}
	}
	delete(s.access, t)
	s.revocations++
	w.WriteHeader(http.StatusOK)
}

// SetTokenLifetime changes the lifetime of the tokens issued from now on.
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.TokenLifetime = d
}

// RevokeRefreshTokens invalidates every refresh token, as an
// administrator or a password change would.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// ExpireAccessTokens makes every access token invalid at once, as a server
// that ends them early would.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Counts says how often the authorization server did what.
type Counts struct {
	Registrations, CodeGrants, Refreshes, Revocations int
	ValidAccess, ValidRefresh                         int
	// RefreshRequests counts every refresh_token grant request, the
	// refused ones too (a refresh token spent twice); Refreshes counts
	// those granted.
	RefreshRequests int
	// Assertions counts the client assertions taken (private_key_jwt).
	Assertions int
}

// Counts returns the counts so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{Registrations: s.registrations, CodeGrants: s.codeGrants, Refreshes: s.refreshes, Revocations: s.revocations,
		ValidAccess: len(s.access), ValidRefresh: len(s.refresh), RefreshRequests: s.refreshTries, Assertions: len(s.jtis)}
}

// LastResource is the resource parameter of the last token request.
func (s *Server) LastResource() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastResource
}

// LastAuthorization is the query of the last authorization request.
func (s *Server) LastAuthorization() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuthQuery
}

// Valid reports whether token is a valid access token now.
func (s *Server) Valid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.access[token]
	return g != nil && time.Now().Before(g.expiry)
}

func (s *Server) rsHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if s.opts.SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		resource := s.URL()
		if s.opts.PRMResource != "" {
			resource = s.opts.PRMResource
		}
		writeJSON(w, http.StatusOK, map[string]any{"resource": resource, "authorization_servers": []string{s.AS.URL}, "scopes_supported": s.opts.Scopes})
	})
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	return mux
}

// authorized answers 401 or 403 unless r carries a valid token with the
// required scope.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	meta := s.RS.URL + "/.well-known/oauth-protected-resource/mcp"
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	g := s.access[tok]
	s.mu.Unlock()
	switch {
	case g == nil || time.Now().After(g.expiry) || g.resource != s.URL():
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, meta))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	case s.opts.RequireScope != "" && (s.opts.RefuseScope || !slices.Contains(strings.Fields(g.scope), s.opts.RequireScope)):
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, s.opts.RequireScope, meta))
		http.Error(w, "forbidden", http.StatusForbidden)
		return false
	}
	return true
}

// Follow is a browser that approves: it gets authURL and follows the
// redirects, to the client's redirect URI. It returns the final status.
func Follow(ctx context.Context, authURL string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func tokenError(w http.ResponseWriter, code int, e string) {
	writeJSON(w, code, map[string]string{"error": e})
}

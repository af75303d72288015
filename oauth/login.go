package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// A Prompter takes the user to the authorization URL of a login: it opens
// a browser, prints the URL, or asks an MCP client to open it. The browser
// then brings the redirect to the login's loopback listener. A Prompter
// returns "" once the URL is on its way, or the redirect URL the user
// pasted (for a browser on another machine, whose redirect cannot reach
// the listener). It must return when ctx ends.
type Prompter func(ctx context.Context, server, authURL string) (pasted string, err error)

// client is the OAuth client a login uses.
type client struct {
	id, secret, method string
}

// loginFlow runs the authorization code grant with PKCE (OAuth 2.1): it
// discovers the authorization server, picks or registers a client, takes
// the user to the authorization URL, receives the redirect on a loopback
// listener, checks state and issuer, exchanges the code and stores the
// token. granted are the scopes held so far, kept on a step-up.
func (h *Handler) loginFlow(ctx context.Context, challenges []oauthex.Challenge, granted []string) error {
	d, err := h.discover(ctx, challenges)
	if err != nil {
		return err
	}
	asm := d.asm
	for _, ep := range []struct{ name, url string }{{"authorization", asm.AuthorizationEndpoint}, {"token", asm.TokenEndpoint}} {
		if err := httpsOrLoopback(ep.url); err != nil {
			return h.step("checking the "+ep.name+" endpoint", err)
		}
	}
	if err := checkPKCE(asm); err != nil {
		return h.step("checking the authorization server", err)
	}
	stored := h.storedClient(asm.Issuer)
	l, stored, err := h.listen(stored)
	if err != nil {
		return h.step("listening for the redirect", err)
	}
	defer l.close()
	cl, err := h.resolveClient(ctx, asm, l.redirectURI(), stored)
	if err != nil {
		return err
	}
	cfg := &oauth2.Config{
		ClientID: cl.id, ClientSecret: cl.secret, RedirectURL: l.redirectURI(),
		Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, AuthStyle: authStyle(cl.method)},
		Scopes:   h.requestScopes(d, granted, true),
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	got, err := h.waitRedirect(ctx, l, authURL, state)
	l.close() // one redirect per login
	if err != nil {
		return err
	}
	if err := checkIssuer(got.Get("iss"), asm); err != nil {
		return h.step("checking the authorization response", err)
	}
	tok, err := cfg.Exchange(h.clientContext(ctx), got.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	if err != nil {
		return h.step("exchanging the authorization code", tokenErr(err, cl.secret))
	}
	rec, err := h.record(tok, asm.Issuer, cl.id, asm.TokenEndpoint, cl.method, asm.RevocationEndpoint, d.resource, cfg.Scopes)
	if err != nil {
		return h.step("exchanging the authorization code", err)
	}
	return h.store(ctx, rec)
}

// checkPKCE refuses an authorization server whose metadata does not list
// S256 in code_challenge_methods_supported: a login uses PKCE with S256
// (RFC 7636), and the MCP specification (2025-11-25, "Authorization Code
// Protection") has clients refuse to go on without it. go-sdk's oauthex
// refuses metadata without the field; an issuer without any metadata,
// named by protected resource metadata, says nothing either.
func checkPKCE(asm *oauthex.AuthServerMeta) error {
	m := asm.CodeChallengeMethodsSupported
	switch {
	case slices.Contains(m, "S256"):
		return nil
	case len(m) == 0:
		return fmt.Errorf("%s publishes no metadata (RFC 8414) listing code_challenge_methods_supported, so nothing says it supports PKCE with S256, which a login requires; hint: ask its operator to publish metadata that lists S256", printable.Clip(asm.Issuer, 200))
	}
	return fmt.Errorf("its metadata lists code_challenge_methods_supported %s, without S256, which a login requires (PKCE, RFC 7636); hint: ask its operator to enable S256", printable.Clip(strings.Join(m, ", "), 200))
}

// requestScopes returns the scopes to ask for: the configured ones, else
// those the challenge asks for, else those the protected resource
// supports, else none (the scope parameter is left out); with the scopes
// already granted on a step-up, and offline_access when the authorization
// server lists it and a refresh token is wanted (SEP-2207).
func (h *Handler) requestScopes(d *discovery, granted []string, offline bool) []string {
	var s []string
	switch {
	case len(h.cfg.Scopes) > 0:
		s = slices.Clone(h.cfg.Scopes)
	case len(d.challenge) > 0:
		s = slices.Clone(d.challenge)
	default:
		s = slices.Clone(d.scopes)
	}
	for _, g := range granted {
		if !slices.Contains(s, g) {
			s = append(s, g)
		}
	}
	if len(h.cfg.Scopes) > 0 && len(d.challenge) > 0 {
		// A step-up beyond the configured scopes.
		for _, c := range d.challenge {
			if !slices.Contains(s, c) {
				s = append(s, c)
			}
		}
	}
	if offline && slices.Contains(d.asm.ScopesSupported, "offline_access") && !slices.Contains(s, "offline_access") {
		s = append(s, "offline_access")
	}
	return s
}

// checkIssuer checks the iss parameter of the authorization response (RFC
// 9207): required and equal to the issuer when the server says it sends
// one; when it does not, an iss that is present must still match.
func checkIssuer(iss string, asm *oauthex.AuthServerMeta) error {
	switch {
	case asm.AuthorizationResponseIssParameterSupported && iss == "":
		return errors.New("the authorization server promises an iss parameter (RFC 9207) and the redirect has none")
	case iss != "" && !issuersEqual(iss, asm.Issuer):
		return fmt.Errorf("the redirect comes from issuer %q, not %q (RFC 9207): a mix-up", printable.Clip(iss, 200), printable.Clip(asm.Issuer, 200))
	case iss != "" && !asm.AuthorizationResponseIssParameterSupported:
		return errors.New("the redirect carries an iss parameter the authorization server does not advertise (RFC 9207)")
	}
	return nil
}

// storedClient returns the stored dynamic registration, when the
// configuration uses dynamic registration and it belongs to issuer.
func (h *Handler) storedClient(issuer string) *clientRecord {
	if h.cfg.ClientID != "" {
		return nil
	}
	reg, ok, err := load[clientRecord](h.opts.Store, h.cfg.clientKey())
	if err != nil || !ok || !reg.usable(issuer, time.Now()) || len(reg.RedirectURIs) == 0 {
		return nil
	}
	return reg
}

// listen opens the loopback listener: on the configured port, else on the
// port of the stored registration's redirect URI, so the registration can
// be reused, else on any port. It returns the registration that still fits.
func (h *Handler) listen(stored *clientRecord) (*listener, *clientRecord, error) {
	port := h.cfg.RedirectPort
	if port == 0 && stored != nil {
		port = redirectPort(stored.RedirectURIs[0])
	}
	l, err := listen(port)
	if err != nil && h.cfg.RedirectPort == 0 && port != 0 {
		l, err = listen(0) // the registered port is taken: register again
	}
	if err != nil {
		return nil, nil, err
	}
	if stored != nil && !slices.Contains(stored.RedirectURIs, l.redirectURI()) {
		stored = nil
	}
	return l, stored, nil
}

func redirectPort(uri string) int {
	u, err := url.Parse(uri)
	if err != nil || !isLoopback(u.Hostname()) {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// resolveClient picks the client to log in as, in the order of the MCP
// specification: a client ID metadata document the authorization server
// accepts, a pre-registered client, a stored dynamic registration, a new
// dynamic registration (stored at once, to be reused).
func (h *Handler) resolveClient(ctx context.Context, asm *oauthex.AuthServerMeta, redirect string, stored *clientRecord) (*client, error) {
	switch {
	case h.cfg.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		return &client{id: h.cfg.ClientMetadataURL, method: methodNone}, nil
	case h.cfg.ClientID != "":
		return &client{id: h.cfg.ClientID, secret: h.cfg.ClientSecret,
			method: pickAuthMethod(asm.TokenEndpointAuthMethodsSupported, h.cfg.ClientSecret != "")}, nil
	case stored != nil:
		return &client{id: stored.ClientID, secret: stored.ClientSecret, method: stored.AuthMethod}, nil
	case asm.RegistrationEndpoint != "":
		return h.register(ctx, asm, redirect)
	}
	return nil, h.step("choosing a client", errors.New("the authorization server offers no dynamic client registration; hint: register Switchboard with it and set oauth.clientId (and oauth.clientSecret) in the server's definition"))
}

// register registers Switchboard dynamically (RFC 7591) as a native client
// whose redirect URI is the loopback listener's, and stores the
// registration.
func (h *Handler) register(ctx context.Context, asm *oauthex.AuthServerMeta, redirect string) (*client, error) {
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:    []string{redirect},
		ClientName:      h.opts.ClientName,
		GrantTypes:      []string{"authorization_code", "refresh_token"},
		ResponseTypes:   []string{"code"},
		ApplicationType: "native",
	}
	resp, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, h.client)
	if err != nil {
		return nil, h.step("registering the client", errors.New(printable.Clip(err.Error(), 300)))
	}
	if err := checkRegistration(resp); err != nil {
		return nil, h.step("registering the client", err)
	}
	method := resp.TokenEndpointAuthMethod
	if method == "" {
		method = pickAuthMethod(asm.TokenEndpointAuthMethodsSupported, resp.ClientSecret != "")
	}
	reg := &clientRecord{
		Issuer: asm.Issuer, ClientID: resp.ClientID, ClientSecret: resp.ClientSecret, AuthMethod: method,
		RedirectURIs: []string{redirect}, RegisteredAt: time.Now(), SecretExpiresAt: resp.ClientSecretExpiresAt,
	}
	if err := save(h.opts.Store, h.cfg.clientKey(), reg); err != nil {
		return nil, h.step("storing the client registration", err)
	}
	return &client{id: reg.ClientID, secret: reg.ClientSecret, method: method}, nil
}

// checkRegistration checks what oauthex does not: an identifier and a
// secret that fit in a request, and a method Switchboard can use.
func checkRegistration(r *oauthex.ClientRegistrationResponse) error {
	if err := checkToken("client_id", r.ClientID, true); err != nil {
		return errors.New("the registration response's client_id is empty, too long or holds bytes a request cannot carry")
	}
	if err := checkToken("client_secret", r.ClientSecret, false); err != nil {
		return errors.New("the registration response's client_secret is too long or holds bytes a request cannot carry")
	}
	switch r.TokenEndpointAuthMethod {
	case "", methodBasic, methodPost:
	case methodNone:
		if r.ClientSecret != "" {
			return errors.New("the registration response gives a client_secret with the method none")
		}
	default:
		return fmt.Errorf("the registration response asks for token endpoint authentication %q, which Switchboard does not support", printable.Clip(r.TokenEndpointAuthMethod, 60))
	}
	return nil
}

// waitRedirect prompts the user and waits for the redirect: on the
// listener, or pasted, within the login timeout. It returns the redirect's
// parameters, whose state matched.
func (h *Handler) waitRedirect(ctx context.Context, l *listener, authURL, state string) (url.Values, error) {
	if h.opts.Waiting != nil {
		defer h.opts.Waiting(ctx)()
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.LoginTimeout)
	defer cancel()
	l.serve(state)
	type prompted struct {
		pasted string
		err    error
	}
	pr := make(chan prompted, 1)
	go func() { // ends when the Prompter returns, at the latest when ctx ends
		p, err := h.opts.Prompt(ctx, h.cfg.Server, authURL)
		pr <- prompted{p, err}
	}()
	for {
		select {
		case q := <-l.got:
			return h.redirectResult(q)
		case p := <-pr:
			switch {
			case p.err != nil && ctx.Err() == nil:
				return nil, h.step("opening the authorization URL", p.err)
			case p.pasted != "":
				q, err := pastedRedirect(p.pasted, state)
				if err != nil {
					return nil, h.step("reading the pasted redirect", err)
				}
				return h.redirectResult(q)
			}
			pr = nil // the URL is shown: wait for the listener
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, h.step("waiting for the browser", fmt.Errorf("no redirect came within %s", h.opts.LoginTimeout))
			}
			return nil, ctx.Err()
		}
	}
}

// redirectResult turns an error redirect into an error.
func (h *Handler) redirectResult(q url.Values) (url.Values, error) {
	if code := q.Get("error"); code != "" {
		msg := printable.Clip(code, 64)
		if d := q.Get("error_description"); d != "" {
			msg += " (" + printable.Clip(d, 200) + ")"
		}
		return nil, h.step("authorizing in the browser", errors.New("the authorization server answered "+msg))
	}
	if q.Get("code") == "" {
		return nil, h.step("authorizing in the browser", errors.New("the redirect has no code"))
	}
	return q, nil
}

// pastedRedirect parses a redirect URL the user pasted; its state must be
// the login's.
func pastedRedirect(s, state string) (url.Values, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("it is not a URL")
	}
	q := u.Query()
	if q.Get("state") != state {
		return nil, errors.New("it is not the redirect of this login: its state does not match")
	}
	return q, nil
}

package oauth

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// Token exchange (RFC 8693, GrantTokenExchange): where a server trusts
// the authorization server the gateway's users sign in with, the gateway
// passes the user's identity without a second login. It posts the user's
// own access token to the gateway (Config.SubjectToken) to the server's
// token endpoint, found as for any grant (the server's protected resource
// metadata, then its authorization server's), authenticated as the
// gateway's client, and gets the user's token for that server, with the
// resource parameter (RFC 8707), the audience if configured, and the
// scopes. The token is stored as the user's (Config.User) and used until
// it expires; then the user's current token is exchanged again: there is
// no refresh token. An exchange the authorization server refuses is a
// *NeedsLoginError for that user that says why; nothing else is tried.
//
// The subject token is never stored, logged, or put in an error: errors
// are redacted of it, as a hostile server's error may echo what it was
// sent.

const (
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
)

// subjectToken returns the user's current access token to the gateway,
// or "".
func (h *Handler) subjectToken() string {
	if h.cfg.SubjectToken == nil {
		return ""
	}
	return h.cfg.SubjectToken()
}

// exchange gets the user's token for the server by token exchange, after
// the server refused sent ("" for none), or on a login (force). One
// exchange at a time: a request that waited for another's uses the token
// it stored, unless that is the one the server refused.
func (h *Handler) exchange(ctx context.Context, challenges []oauthex.Challenge, sent string, force bool) error {
	if err := h.acquireLogin(ctx); err != nil {
		return err
	}
	defer h.releaseLogin()
	if !force {
		rec, err := loadToken(h.opts.Store, &h.cfg)
		if err != nil {
			return h.step("reading the stored token", err)
		}
		if rec != nil && rec.AccessToken != sent && fresh(rec, time.Now()) {
			h.mu.Lock()
			h.cur = rec
			h.mu.Unlock()
			return nil // another request exchanged while this one waited
		}
	}
	d, method, err := h.tokenEndpoint(ctx, challenges)
	if err != nil {
		return err
	}
	if len(d.asm.GrantTypesSupported) > 0 && !slices.Contains(d.asm.GrantTypesSupported, grantTypeTokenExchange) {
		return h.step("checking the authorization server metadata", fmt.Errorf("the authorization server %s does not list the token exchange grant (%s) in grant_types_supported; hint: use another grant for this server", printable.Clip(d.asm.Issuer, 200), grantTypeTokenExchange))
	}
	rec, err := h.requestExchange(ctx, d.asm.TokenEndpoint, method, h.requestScopes(d, nil, false), d.resource, d.asm.Issuer, d.asm.RevocationEndpoint)
	if err != nil {
		return err
	}
	return h.store(ctx, rec)
}

// exchangeMethod is how the client authenticates a new exchange for a
// token got with method: the configuration's key, if it has one now.
func (h *Handler) exchangeMethod(method string) string {
	if h.key != nil {
		return methodPrivateKeyJWT
	}
	if method == methodPrivateKeyJWT {
		return methodBasic // the key was removed: the secret, if any
	}
	return method
}

// requestExchange posts the token exchange request and makes the record
// of its token. x/oauth2 has no token exchange: clientcredentials.Config
// lets the grant be replaced and parameters be added, and handles client
// authentication and the response, as for the refresh in renew.
func (h *Handler) requestExchange(ctx context.Context, tokenURL, method string, scopes []string, resource, issuer, revocation string) (*tokenRecord, error) {
	subject := h.subjectToken()
	if subject == "" {
		return nil, &NeedsLoginError{Server: h.cfg.Server, Reason: "the token exchange passes the signed-in user's own access token, and this request carries none", NoLogin: true}
	}
	cc := &clientcredentials.Config{
		ClientID: h.cfg.ClientID, ClientSecret: h.cfg.ClientSecret, TokenURL: tokenURL,
		Scopes: scopes, AuthStyle: authStyle(method),
		EndpointParams: url.Values{
			"grant_type":           {grantTypeTokenExchange},
			"subject_token":        {subject},
			"subject_token_type":   {tokenTypeAccessToken},
			"requested_token_type": {tokenTypeAccessToken},
		},
	}
	if resource != "" {
		cc.EndpointParams.Set("resource", resource)
	}
	if h.cfg.Audience != "" {
		cc.EndpointParams.Set("audience", h.cfg.Audience)
	}
	if err := h.authenticate(cc, method, issuer); err != nil {
		return nil, err
	}
	const step = "exchanging the user's token"
	tok, err := cc.Token(h.clientContext(ctx))
	if err != nil {
		switch code := errorCode(err); code {
		case "invalid_grant", "invalid_request", "unauthorized_client", "invalid_client", "access_denied", "invalid_target", "invalid_scope":
			// Refused: this user has no token for the server now. The
			// reason is the server's code and description, redacted.
			return nil, &NeedsLoginError{Server: h.cfg.Server, NoLogin: true,
				Reason: "the authorization server refused to exchange your token for one to this server: " + redact(tokenErr(err), subject, h.cfg.ClientSecret).Error()}
		}
		return nil, h.step(step, tokenErr(err, subject, h.cfg.ClientSecret))
	}
	if tok.AccessToken == subject {
		return nil, h.step(step, fmt.Errorf("the token endpoint returned the user's own token unchanged"))
	}
	rec, err := h.record(tok, issuer, h.cfg.ClientID, tokenURL, method, revocation, resource, scopes)
	if err != nil {
		return nil, h.step(step, err)
	}
	rec.Grant = GrantTokenExchange
	return rec, nil
}

package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// A flight is one refresh under way; callers that need it meanwhile wait
// for it and share its result.
type flight struct {
	done chan struct{} // closed when rec and err are set
	rec  *tokenRecord
	err  error
}

// refresh replaces the token stale, which cur holds: one refresh at a time
// in this handler, and across handlers and processes through the store's
// lock (see refreshShared). No lock is held while it calls out.
func (h *Handler) refresh(ctx context.Context, cur *tokenRecord, stale string, refused bool) (*tokenRecord, error) {
	h.mu.Lock()
	if f := h.flight; f != nil {
		h.mu.Unlock()
		select {
		case <-f.done:
			return f.rec, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	h.flight = f
	h.mu.Unlock()
	out := h.refreshShared(ctx, cur, stale, refused)
	h.mu.Lock()
	h.flight, h.cur = nil, out.cur
	if out.reason != "" {
		h.reason = out.reason
	}
	h.mu.Unlock()
	f.rec, f.err = out.send, out.err
	close(f.done)
	return f.rec, f.err
}

// refreshOutcome is what a refresh leaves.
type refreshOutcome struct {
	cur    *tokenRecord // the token in use afterwards; nil when none is stored
	reason string       // why the token was dropped, if it was
	send   *tokenRecord // the token to send; nil with err
	err    error
}

// refreshShared refreshes under the store's lock on the token, so that one
// process refreshes and the others use its result: it reads the stored
// token again once it holds the lock, and if another process stored a new
// one meanwhile, uses that.
//
// A refresh the server refuses with invalid_grant removes the token and
// fails with a *NeedsLoginError. After any other failure, a token refreshed
// ahead of its expiry is used until it expires, unless the server already
// refused it.
func (h *Handler) refreshShared(ctx context.Context, cur *tokenRecord, stale string, refused bool) refreshOutcome {
	unlock, err := h.opts.Store.Lock(ctx, h.cfg.tokenKey())
	if err != nil {
		return refreshOutcome{cur: cur, err: h.step("refreshing the token", err)}
	}
	defer unlock()
	now := time.Now()
	rec, err := loadToken(h.opts.Store, &h.cfg)
	switch {
	case err != nil:
		return refreshOutcome{cur: cur, err: h.step("reading the stored token", err)}
	case rec == nil:
		reason := "the stored OAuth token was removed"
		return refreshOutcome{reason: reason, err: &NeedsLoginError{Server: h.cfg.Server, Reason: reason}}
	case rec.AccessToken != stale && fresh(rec, now):
		return refreshOutcome{cur: rec, send: rec} // another process refreshed it
	}
	next, err := h.renew(ctx, rec)
	var nl *NeedsLoginError
	switch {
	case err == nil:
		if err := save(h.opts.Store, h.cfg.tokenKey(), next); err != nil {
			return refreshOutcome{cur: rec, err: h.step("storing the refreshed token", err)}
		}
		return refreshOutcome{cur: next, send: next}
	case errors.As(err, &nl):
		_ = h.opts.Store.Delete(h.cfg.tokenKey())
		return refreshOutcome{reason: nl.Reason, err: err}
	case !expired(rec, now) && !refused:
		h.opts.Logger.Warn("refreshing the OAuth token failed; the current one is used until it expires", "server", h.cfg.Server, "error", err)
		return refreshOutcome{cur: rec, send: rec}
	}
	return refreshOutcome{cur: rec, err: err}
}

// renew gets a new token for rec: with its refresh token, or with a new
// client_credentials request.
func (h *Handler) renew(ctx context.Context, rec *tokenRecord) (*tokenRecord, error) {
	if rec.Grant == GrantTokenExchange {
		// No refresh token: the user's current token is exchanged again.
		return h.requestExchange(ctx, rec.TokenURL, h.exchangeMethod(rec.AuthMethod), rec.Scopes, rec.Resource, rec.Issuer, rec.RevocationURL)
	}
	if rec.Grant == GrantClientCredentials {
		method := rec.AuthMethod
		if h.key != nil {
			method = methodPrivateKeyJWT // the configuration's, which may have changed since
		}
		return h.requestClientCredentials(ctx, rec.TokenURL, method, rec.Scopes, rec.Resource, rec.Issuer, rec.RevocationURL)
	}
	if rec.RefreshToken == "" {
		return nil, &NeedsLoginError{Server: h.cfg.Server, Reason: "the OAuth token expired and the server gave no refresh token"}
	}
	// x/oauth2 refreshes without extra parameters, and the MCP
	// specification asks for the resource parameter (RFC 8707) in every
	// token request: clientcredentials.Config lets the grant be replaced
	// and parameters be added, and handles client authentication and the
	// response as for any grant.
	cc := &clientcredentials.Config{
		ClientID: rec.ClientID, ClientSecret: h.secretFor(rec), TokenURL: rec.TokenURL,
		AuthStyle: authStyle(rec.AuthMethod),
		EndpointParams: url.Values{
			"grant_type":    {"refresh_token"},
			"refresh_token": {rec.RefreshToken},
		},
	}
	if rec.Resource != "" {
		cc.EndpointParams.Set("resource", rec.Resource)
	}
	tok, err := cc.Token(h.clientContext(ctx))
	if err != nil {
		if code := errorCode(err); code == "invalid_grant" || code == "invalid_client" || code == "unauthorized_client" {
			return nil, &NeedsLoginError{Server: h.cfg.Server, Reason: fmt.Sprintf("the server refused the stored refresh token (%s)", code)}
		}
		return nil, h.step("refreshing the token", tokenErr(err, rec.RefreshToken, rec.AccessToken))
	}
	next, err := h.record(tok, rec.Issuer, rec.ClientID, rec.TokenURL, rec.AuthMethod, rec.RevocationURL, rec.Resource, rec.Scopes)
	if err != nil {
		return nil, h.step("refreshing the token", err)
	}
	next.Grant = rec.Grant
	return next, nil
}

// secretFor returns the client secret of the client rec was issued to.
func (h *Handler) secretFor(rec *tokenRecord) string {
	if rec.ClientID == h.cfg.ClientID {
		return h.cfg.ClientSecret
	}
	if reg, ok, _ := load[clientRecord](h.opts.Store, h.cfg.clientKey()); ok && reg.ClientID == rec.ClientID {
		return reg.ClientSecret
	}
	return ""
}

// clientCredentials gets a token with the client_credentials grant (RFC
// 6749 section 4.4, MCP's SEP-1046): no user, no browser.
func (h *Handler) clientCredentials(ctx context.Context, challenges []oauthex.Challenge) error {
	d, method, err := h.tokenEndpoint(ctx, challenges)
	if err != nil {
		return err
	}
	rec, err := h.requestClientCredentials(ctx, d.asm.TokenEndpoint, method, h.requestScopes(d, nil, false), d.resource, d.asm.Issuer, d.asm.RevocationEndpoint)
	if err != nil {
		return err
	}
	return h.store(ctx, rec)
}

// tokenEndpoint discovers the authorization server of a grant made
// without a user at hand (client_credentials, token exchange): its token
// endpoint must be https (or loopback), and the configured client
// authenticates with its key (private_key_jwt) when it has one, which the
// server must take, else with its secret as the server prefers.
func (h *Handler) tokenEndpoint(ctx context.Context, challenges []oauthex.Challenge) (*discovery, string, error) {
	d, err := h.discover(ctx, challenges)
	if err != nil {
		return nil, "", err
	}
	if err := httpsOrLoopback(d.asm.TokenEndpoint); err != nil {
		return nil, "", h.step("checking the token endpoint", err)
	}
	method := pickAuthMethod(d.asm.TokenEndpointAuthMethodsSupported, true)
	if h.key != nil {
		method = methodPrivateKeyJWT
		if err := checkAssertionMethod(h.key, d.asm.TokenEndpointAuthMethodsSupported, d.asm.TokenEndpointAuthSigningAlgValuesSupported); err != nil {
			return nil, "", h.step("choosing how the client authenticates", err)
		}
	}
	return d, method, nil
}

func (h *Handler) requestClientCredentials(ctx context.Context, tokenURL, method string, scopes []string, resource, issuer, revocation string) (*tokenRecord, error) {
	cc := &clientcredentials.Config{
		ClientID: h.cfg.ClientID, ClientSecret: h.cfg.ClientSecret, TokenURL: tokenURL,
		Scopes: scopes, AuthStyle: authStyle(method),
	}
	cc.EndpointParams = url.Values{}
	if resource != "" {
		cc.EndpointParams.Set("resource", resource)
	}
	if err := h.authenticate(cc, method, issuer); err != nil {
		return nil, err
	}
	tok, err := cc.Token(h.clientContext(ctx))
	if err != nil {
		return nil, h.step("requesting a client_credentials token", tokenErr(err))
	}
	rec, err := h.record(tok, issuer, h.cfg.ClientID, tokenURL, method, revocation, resource, scopes)
	if err != nil {
		return nil, h.step("requesting a client_credentials token", err)
	}
	rec.Grant = GrantClientCredentials
	return rec, nil
}

// authenticate makes cc authenticate the configured client with a signed
// assertion when method is private_key_jwt (see assertion.go); the
// others are cc's AuthStyle.
func (h *Handler) authenticate(cc *clientcredentials.Config, method, issuer string) error {
	if method != methodPrivateKeyJWT {
		return nil
	}
	if h.key == nil {
		return &NeedsLoginError{Server: h.cfg.Server, Reason: "the token was got with a clientKey, and the configuration has none now"}
	}
	audience := issuer
	if audience == "" {
		audience = cc.TokenURL
	}
	a, err := h.key.assertion(h.cfg.ClientID, audience, time.Now())
	if err != nil {
		return h.step("signing the client assertion", err)
	}
	cc.ClientSecret = ""
	cc.EndpointParams.Set("client_assertion_type", assertionType)
	cc.EndpointParams.Set("client_assertion", a)
	return nil
}

// store saves rec as the server's token, under the store's lock, and makes
// it the token in use.
func (h *Handler) store(ctx context.Context, rec *tokenRecord) error {
	unlock, err := h.opts.Store.Lock(ctx, h.cfg.tokenKey())
	if err != nil {
		return h.step("storing the token", err)
	}
	defer unlock()
	if err := save(h.opts.Store, h.cfg.tokenKey(), rec); err != nil {
		return h.step("storing the token", err)
	}
	h.mu.Lock()
	h.cur, h.reason = rec, ""
	h.mu.Unlock()
	return nil
}

func (h *Handler) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, h.client)
}

// maxTokenLen bounds a token from a token endpoint.
const maxTokenLen = 16 << 10

// record checks a token response and makes the record to store. A token
// that is not a Bearer token, or that is empty, too long or holds bytes a
// header cannot carry, is refused.
func (h *Handler) record(tok *oauth2.Token, issuer, clientID, tokenURL, method, revocation, resource string, requested []string) (*tokenRecord, error) {
	if err := checkToken("access_token", tok.AccessToken, true); err != nil {
		return nil, err
	}
	if err := checkToken("refresh_token", tok.RefreshToken, false); err != nil {
		return nil, err
	}
	if t := tok.TokenType; t != "" && !strings.EqualFold(t, "bearer") {
		return nil, fmt.Errorf("the token endpoint issued a %q token; only Bearer tokens are supported", printable.Clip(t, 40))
	}
	scopes := requested
	if s, ok := tok.Extra("scope").(string); ok {
		scopes = strings.Fields(s) // what was granted, when the server says
	}
	now := time.Now()
	return &tokenRecord{
		Server: h.cfg.Server, URL: h.cfg.URL, Grant: h.cfg.grant(), Issuer: issuer, ClientID: clientID,
		TokenURL: tokenURL, AuthMethod: method, RevocationURL: revocation, Resource: resource,
		Scopes: slices.Clone(scopes), AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		Expiry: tok.Expiry, ObtainedAt: now,
	}, nil
}

func checkToken(field, v string, required bool) error {
	switch {
	case v == "" && required:
		return fmt.Errorf("the token response has no %s", field)
	case len(v) > maxTokenLen:
		return fmt.Errorf("the token response's %s is longer than %d bytes", field, maxTokenLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return fmt.Errorf("the token response's %s holds a byte a header cannot carry", field)
		}
	}
	return nil
}

// tokenErr describes a failed token request by its status and error code
// (RFC 6749 section 5.2), never by its body, which a hostile server may
// fill with anything; secrets are redacted from what is left.
func tokenErr(err error, secrets ...string) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return redact(err, secrets...)
	}
	msg := "the token endpoint refused the request"
	if re.Response != nil {
		msg = fmt.Sprintf("the token endpoint answered HTTP %d", re.Response.StatusCode)
	}
	if re.ErrorCode != "" {
		msg += ": " + printable.Clip(re.ErrorCode, 64)
	}
	if re.ErrorDescription != "" {
		msg += " (" + printable.Clip(re.ErrorDescription, 200) + ")"
	}
	return redact(errors.New(msg), secrets...)
}

func errorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// Token endpoint client authentication methods (RFC 7591 section 2).
const (
	methodBasic = "client_secret_basic"
	methodPost  = "client_secret_post"
	methodNone  = "none"
)

// pickAuthMethod chooses how a client authenticates at the token endpoint
// from the methods the authorization server lists: none without a secret;
// with one, client_secret_basic, the default of RFC 8414, unless only
// client_secret_post is listed.
func pickAuthMethod(supported []string, hasSecret bool) string {
	switch {
	case !hasSecret:
		return methodNone
	case slices.Contains(supported, methodBasic) || len(supported) == 0:
		return methodBasic
	case slices.Contains(supported, methodPost):
		return methodPost
	}
	return methodBasic
}

func authStyle(method string) oauth2.AuthStyle {
	if method == methodBasic {
		return oauth2.AuthStyleInHeader
	}
	// client_secret_post; and none, which sends client_id in the body
	// without a secret.
	return oauth2.AuthStyleInParams
}

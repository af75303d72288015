package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// Stored describes the token stored for a server's configuration, without
// a secret.
type Stored struct {
	Grant      string    `json:"grant"`
	Issuer     string    `json:"issuer,omitempty"`
	ClientID   string    `json:"clientId,omitempty"`
	Scopes     []string  `json:"scopes,omitempty"`
	Expiry     time.Time `json:"expiry,omitzero"`
	Refresh    bool      `json:"refreshable"` // a refresh token is stored
	ObtainedAt time.Time `json:"obtainedAt,omitzero"`
}

// Lookup returns what is stored for cfg (its server, URL and client), or
// nil when no token is.
func Lookup(s credstore.Store, cfg Config) (*Stored, error) {
	rec, err := loadToken(s, &cfg)
	if err != nil || rec == nil {
		return nil, err
	}
	return &Stored{
		Grant: rec.Grant, Issuer: rec.Issuer, ClientID: rec.ClientID, Scopes: rec.Scopes,
		Expiry: rec.Expiry, Refresh: rec.RefreshToken != "", ObtainedAt: rec.ObtainedAt,
	}, nil
}

// serverPrefix is the prefix of every key of a server.
func serverPrefix(server string) string { return "oauth/" + server + "/" }

// Logout removes everything stored for the server, whatever its URL or
// client was: tokens and dynamic client registrations. Each token is first
// revoked (RFC 7009) where the authorization server has a revocation
// endpoint; a revocation that fails is reported in revokeErr, and the
// token is removed all the same. secret is the configured client secret,
// for revoking a pre-registered confidential client's tokens. removed
// counts the tokens removed.
func Logout(ctx context.Context, s credstore.Store, server, secret string, client *http.Client) (removed int, revokeErr, err error) {
	if client == nil {
		client = http.DefaultClient
	}
	keys, err := s.Keys(serverPrefix(server))
	if err != nil {
		return 0, nil, err
	}
	var revokeErrs []error
	for _, key := range keys {
		if strings.HasSuffix(key, "/token") {
			if rec, ok, _ := load[tokenRecord](s, key); ok {
				sec := secret
				base, _, _ := strings.Cut(strings.TrimSuffix(key, "/token"), userInfix) // a user's tokens share the gateway's registration
				if reg, ok, _ := load[clientRecord](s, base+"/client"); ok && reg.ClientID == rec.ClientID {
					sec = reg.ClientSecret
				}
				if err := revoke(ctx, client, rec, sec); err != nil {
					revokeErrs = append(revokeErrs, err)
				}
				removed++
			}
		}
		if err := s.Delete(key); err != nil {
			return removed, errors.Join(revokeErrs...), err
		}
	}
	return removed, errors.Join(revokeErrs...), nil
}

// revoke revokes rec's refresh token, which also ends its access tokens at
// most servers, and then its access token.
func revoke(ctx context.Context, client *http.Client, rec *tokenRecord, secret string) error {
	if rec.RevocationURL == "" {
		return nil
	}
	if err := httpsOrLoopback(rec.RevocationURL); err != nil {
		return fmt.Errorf("revoking the token of %q: %v", rec.Server, err)
	}
	client = guarded(client, rec.URL)
	for _, t := range []struct{ token, hint string }{{rec.RefreshToken, "refresh_token"}, {rec.AccessToken, "access_token"}} {
		if t.token == "" {
			continue
		}
		if err := revokeOne(ctx, client, rec, secret, t.token, t.hint); err != nil {
			return fmt.Errorf("revoking the %s of %q: %w", strings.ReplaceAll(t.hint, "_", " "), rec.Server, err)
		}
	}
	return nil
}

func revokeOne(ctx context.Context, client *http.Client, rec *tokenRecord, secret, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	if rec.AuthMethod != methodBasic {
		form.Set("client_id", rec.ClientID)
		if rec.AuthMethod == methodPost {
			form.Set("client_secret", secret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.RevocationURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if rec.AuthMethod == methodBasic {
		req.SetBasicAuth(url.QueryEscape(rec.ClientID), url.QueryEscape(secret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return redact(err, token, secret)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the revocation endpoint answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// Servers returns the names of the servers something is stored for.
func Servers(s credstore.Store) ([]string, error) {
	keys, err := s.Keys("oauth/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		name, _, _ := strings.Cut(strings.TrimPrefix(k, "oauth/"), "/")
		if len(out) == 0 || out[len(out)-1] != name {
			out = append(out, name)
		}
	}
	return out, nil
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Token exchange (RFC 8693), as a company IdP configured for a gateway
// would do it:
//   - the gateway's confidential client, GatewayClientID with secret
//     GatewaySecret (client_secret_basic), may exchange a user's access
//     token for one to an upstream: the subject stays the user (no
//     impersonation: the example's admin check is not made), and the
//     token is a JWT whose audience is the resource parameter (the
//     upstream's URL) when the request names no audience, as an
//     audience mapper would make it;
//   - a user's token got with scope ScopeNoExchange carries the claim
//     noExchangeClaim, and its exchange is refused (invalid_grant), as a
//     policy that keeps a user from an upstream;
//   - GET /test/exchanges answers the exchanges made, by subject, as a
//     JSON object.

// GatewayClientID and GatewaySecret are the gateway's client.
const (
	GatewayClientID = "switchboard-gateway"
	GatewaySecret   = "gateway-secret"
)

// ScopeNoExchange, in a user's token, makes its exchange refused.
const ScopeNoExchange = "test:noexchange"

// noExchangeClaim marks a token got with ScopeNoExchange (a JWT access
// token of the op package carries no scope claim).
const noExchangeClaim = "test_noexchange"

// GetPrivateClaimsFromRequest is GetPrivateClaimsFromScopes (main.go),
// with noExchangeClaim for ScopeNoExchange. The op package prefers it.
func (s *store) GetPrivateClaimsFromRequest(ctx context.Context, r op.TokenRequest, scopes []string) (map[string]any, error) {
	claims, err := s.GetPrivateClaimsFromScopes(ctx, r.GetSubject(), "", scopes)
	if err != nil {
		return nil, err
	}
	if slices.Contains(scopes, ScopeNoExchange) {
		claims[noExchangeClaim] = true
	}
	return claims, nil
}

// gatewayClient is the gateway's client, registered with the others.
func gatewayClient() *storage.Client {
	return storage.WebClient(GatewayClientID, GatewaySecret)
}

// exchangeLog counts the exchanges made, by subject.
type exchangeLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *exchangeLog) add(subject string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[subject]++
}

func (l *exchangeLog) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(l.n)
}

// ValidateTokenExchangeRequest replaces the example's: the gateway's
// client exchanges a user's access token for an access token of the same
// user, unless the user's token has ScopeNoExchange.
func (s *store) ValidateTokenExchangeRequest(ctx context.Context, r op.TokenExchangeRequest) error {
	switch {
	case r.GetClientID() != GatewayClientID:
		return oidc.ErrUnauthorizedClient().WithDescription("only the gateway's client may exchange tokens")
	case r.GetExchangeSubjectTokenType() != oidc.AccessTokenType:
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are exchanged")
	case r.GetExchangeActor() != "":
		return oidc.ErrInvalidRequest().WithDescription("no delegation: the subject token alone")
	case r.GetExchangeSubjectTokenClaims()[noExchangeClaim] == true:
		return oidc.ErrInvalidGrant().WithDescription("this user may not use the requested resource")
	}
	if r.GetRequestedTokenType() == "" {
		r.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if r.GetRequestedTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	r.SetSubject(r.GetExchangeSubject())
	r.SetCurrentScopes(r.GetScopes())
	s.exchanges.add(r.GetExchangeSubject())
	return nil
}

// exchangeRoutes serves GET /test/exchanges, and makes a token exchange
// request that names no audience name its resource as the audience.
func (s *store) exchangeRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/test/exchanges" {
			s.exchanges.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
			if err := r.ParseForm(); err == nil && r.PostForm.Get("grant_type") == string(oidc.GrantTypeTokenExchange) &&
				r.PostForm.Get("audience") == "" && len(r.PostForm["resource"]) > 0 {
				r.PostForm["audience"] = r.PostForm["resource"]
				r.Form["audience"] = r.PostForm["resource"]
			}
		}
		next.ServeHTTP(w, r)
	})
}

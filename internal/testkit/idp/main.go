// Command idp is the OpenID provider of Switchboard's identity tests: the
// example OP of github.com/zitadel/oidc (its op package, its login pages
// and its in-memory storage), on 127.0.0.1, issuing JWT access tokens for
// the resource the tests name. It is a module of its own so that its
// dependencies never reach Switchboard's; the tests build it once per run
// (internal/testkit/idptest).
//
// It prints its issuer URL on the first line of stdout, then serves until
// its stdin closes or it is killed.
//
// What it adds to the example, as a real provider's configuration would:
//   - a public client, ClientID, whose access tokens are JWTs (the
//     example's clients issue opaque ones) with the resource (-resource)
//     in their audience, as an audience mapper of Keycloak or an
//     application ID URI of Entra ID would put it;
//   - a groups claim in access tokens (Groups);
//   - the example's service user sid1/verysecret issues JWTs too
//     (client_credentials), with the same audience and its own groups;
//   - for the refusal tests: scope "test:expired" gets a token that
//     expired ten minutes ago, and "test:elsewhere" one for another
//     audience only. Both are signed by the provider like any other.
//   - a second public client, OpaqueClientID, whose access tokens are
//     opaque (the example's own kind), for token introspection: their
//     audience names the resource and IntrospectorID, a confidential
//     client (secret IntrospectorSecret) the gateway introspects as (the
//     example's storage answers only a client in the token's audience);
//     the introspection answer carries "aud", "iss" and the groups
//     claim; a "test:expired" token is inactive, and a "test:elsewhere"
//     one is active for IntrospectorID and Elsewhere only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ClientID is the public client users sign in with (PKCE, redirect URI
// RedirectURI).
const ClientID = "switchboard-test"

// RedirectURI is ClientID's redirect URI: nothing listens there; a test
// reads the code from the redirect.
const RedirectURI = "http://localhost/callback"

// Groups are the groups claim of each subject: the example's users id1
// (test-user@127.0.0.1) and id2 (test-user2), both with password
// "verysecure", and its service user sid1.
var Groups = map[string][]string{
	"id1":  {"alpha", "admins"},
	"id2":  {"beta"},
	"sid1": {"robots"},
}

// OpaqueClientID is the public client whose access tokens are opaque.
const OpaqueClientID = "switchboard-test-opaque"

// IntrospectorID and IntrospectorSecret are the confidential client the
// gateway introspects opaque tokens as: the gateway's one client, which
// exchanges tokens too (exchange.go).
const (
	IntrospectorID     = GatewayClientID
	IntrospectorSecret = GatewaySecret
)

// Elsewhere is the audience of a "test:elsewhere" token.
const Elsewhere = "https://elsewhere.example/mcp"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	resource := flag.String("resource", "", "the resource server's URL, put in every access token's audience")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	storage.RegisterClients(storage.NativeClient(ClientID, RedirectURI), storage.NativeClient(OpaqueClientID, RedirectURI), gatewayClient())
	st := &store{Storage: storage.NewStorage(storage.NewUserStore(issuer)), resource: *resource, issuer: issuer, opaque: map[string]opaqueToken{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	router := exampleop.SetupServer(issuer, st, quiet, false)
	fmt.Println(issuer)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	log.Fatal((&http.Server{Handler: st.exchangeRoutes(router), ReadHeaderTimeout: 10 * time.Second}).Serve(ln))
}

// store is the example's storage, with the additions the package comment
// lists.
type store struct {
	*storage.Storage
	resource, issuer string
	exchanges        exchangeLog // exchange.go

	mu     sync.Mutex
	opaque map[string]opaqueToken // by token ID
}

// opaqueToken is what the introspection of an opaque token needs that
// the example's storage keeps to itself.
type opaqueToken struct {
	audience []string
	clientID string // the example's storage loses it: it sees our wrapper
	expired  bool
	revoked  bool
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	if id == OpaqueClientID {
		return testClient{c}, nil
	}
	return jwtClient{testClient{c}}, nil
}

func (s *store) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	c, err := s.Storage.ClientCredentials(ctx, id, secret)
	if err != nil {
		return nil, err
	}
	return jwtClient{testClient{c}}, nil
}

func (s *store) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	r, err := s.Storage.ClientCredentialsTokenRequest(ctx, id, scopes)
	if err != nil {
		return nil, err
	}
	return audienced{r, s.resource}, nil
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return audiencedAuth{r, s.resource}, nil
}

func (s *store) CreateAccessToken(ctx context.Context, r op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, r)
	if slices.Contains(r.GetScopes(), "test:expired") {
		exp = time.Now().Add(-10 * time.Minute)
	}
	s.remember(id, r)
	return id, exp, err
}

func (s *store) CreateAccessAndRefreshTokens(ctx context.Context, r op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, r, current)
	if slices.Contains(r.GetScopes(), "test:expired") {
		exp = time.Now().Add(-10 * time.Minute)
	}
	s.remember(id, r)
	return id, refresh, exp, err
}

// remember keeps what introspecting token id will need.
func (s *store) remember(id string, r op.TokenRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok := opaqueToken{audience: r.GetAudience(), expired: slices.Contains(r.GetScopes(), "test:expired")}
	if c, ok := r.(interface{ GetClientID() string }); ok {
		tok.clientID = c.GetClientID()
	}
	s.opaque[id] = tok
}

// RevokeToken revokes an access token of ours for the client it was
// issued to, which the example's storage no longer knows.
func (s *store) RevokeToken(ctx context.Context, tokenIDOrToken, userID, clientID string) *oidc.Error {
	s.mu.Lock()
	tok, ok := s.opaque[tokenIDOrToken]
	if ok && tok.clientID == clientID {
		tok.revoked = true
		s.opaque[tokenIDOrToken] = tok
	}
	s.mu.Unlock()
	if ok && tok.clientID == clientID {
		return nil
	}
	return s.Storage.RevokeToken(ctx, tokenIDOrToken, userID, clientID)
}

// SetIntrospectionFromToken answers as the example does (a token of
// another client's audience is inactive), and adds the token's audience,
// client, the issuer and the subject's groups; a "test:expired" token,
// and a revoked one, is inactive.
func (s *store) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	tok, ok := s.opaque[tokenID]
	s.mu.Unlock()
	if !ok || tok.expired || tok.revoked {
		return errors.New("token is invalid, expired or revoked")
	}
	if err := s.Storage.SetIntrospectionFromToken(ctx, resp, tokenID, subject, clientID); err != nil {
		return err
	}
	resp.Audience = tok.audience
	resp.ClientID = tok.clientID
	resp.Issuer = s.issuer
	if g, ok := Groups[subject]; ok {
		if resp.Claims == nil {
			resp.Claims = map[string]any{}
		}
		resp.Claims["groups"] = g
	}
	return nil
}

func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err != nil {
		return nil, err
	}
	if claims == nil {
		claims = map[string]any{}
	}
	if g, ok := Groups[userID]; ok {
		claims["groups"] = g
	}
	return claims, nil
}

// audience is the audience of a token for scopes: the client's and the
// resource's, or only Elsewhere; IntrospectorID too for an opaque token
// (of OpaqueClientID).
func audience(base []string, resource string, scopes []string, clientID string) []string {
	var aud []string
	switch {
	case slices.Contains(scopes, "test:elsewhere"):
		aud = []string{Elsewhere}
	case resource == "":
		aud = slices.Clone(base)
	default:
		aud = append(slices.Clone(base), resource)
	}
	if clientID == OpaqueClientID {
		aud = append(aud, IntrospectorID)
	}
	return aud
}

type audienced struct {
	op.TokenRequest
	resource string
}

func (r audienced) GetAudience() []string {
	return audience(r.TokenRequest.GetAudience(), r.resource, r.GetScopes(), "")
}

type audiencedAuth struct {
	op.AuthRequest
	resource string
}

func (r audiencedAuth) GetAudience() []string {
	return audience(r.AuthRequest.GetAudience(), r.resource, r.GetScopes(), r.GetClientID())
}

// jwtClient issues JWT access tokens.
type jwtClient struct{ op.Client }

func (c jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// testClient lets the test scopes through.
type testClient struct{ op.Client }

func (c testClient) IsScopeAllowed(scope string) bool {
	return strings.HasPrefix(scope, "test:") || c.Client.IsScopeAllowed(scope)
}

func (c testClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

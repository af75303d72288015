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
package main

import (
	"context"
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
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
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
	storage.RegisterClients(storage.NativeClient(ClientID, RedirectURI), gatewayClient())
	st := &store{Storage: storage.NewStorage(storage.NewUserStore(issuer)), resource: *resource}
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
	resource  string
	exchanges exchangeLog // exchange.go
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

func (s *store) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	c, err := s.Storage.ClientCredentials(ctx, id, secret)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
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
	return id, exp, err
}

func (s *store) CreateAccessAndRefreshTokens(ctx context.Context, r op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, r, current)
	if slices.Contains(r.GetScopes(), "test:expired") {
		exp = time.Now().Add(-10 * time.Minute)
	}
	return id, refresh, exp, err
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
// resource's, or only Elsewhere.
func audience(base []string, resource string, scopes []string) []string {
	if slices.Contains(scopes, "test:elsewhere") {
		return []string{Elsewhere}
	}
	if resource == "" {
		return base
	}
	return append(slices.Clone(base), resource)
}

type audienced struct {
	op.TokenRequest
	resource string
}

func (r audienced) GetAudience() []string {
	return audience(r.TokenRequest.GetAudience(), r.resource, r.GetScopes())
}

type audiencedAuth struct {
	op.AuthRequest
	resource string
}

func (r audiencedAuth) GetAudience() []string {
	return audience(r.AuthRequest.GetAudience(), r.resource, r.GetScopes())
}

// jwtClient issues JWT access tokens and lets the test scopes through.
type jwtClient struct{ op.Client }

func (c jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c jwtClient) IsScopeAllowed(scope string) bool {
	return strings.HasPrefix(scope, "test:") || c.Client.IsScopeAllowed(scope)
}

func (c jwtClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

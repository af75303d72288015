// Package idptest starts the identity tests' OpenID provider (the example
// OP of github.com/zitadel/oidc, in internal/testkit/idp, a module of its
// own) on 127.0.0.1 and gets access tokens from it the way a client does:
// the authorization code flow with PKCE through its login page, and
// client_credentials for its machine client.
package idptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Users of the provider, with their groups (idp.Groups): Alpha is in
// "alpha" and "admins", Beta in "beta"; Machine (client_credentials) is
// in "robots".
const (
	Alpha    = "test-user@127.0.0.1"
	AlphaSub = "id1"
	Beta     = "test-user2"
	BetaSub  = "id2"
	Password = "verysecure"

	MachineID     = "sid1"
	MachineSecret = "verysecret"

	// IntrospectorID and IntrospectorSecret are the confidential client a
	// gateway introspects opaque tokens as (settings.identity.introspection):
	// the gateway's one client, which exchanges tokens too.
	IntrospectorID     = GatewayClientID
	IntrospectorSecret = GatewaySecret

	clientID       = "switchboard-test"
	opaqueClientID = "switchboard-test-opaque" // its tokens are opaque
	redirectURI    = "http://localhost/callback"
)

// Scopes that make the provider issue a token the gateway must refuse.
const (
	ScopeExpired   = "test:expired"   // expired ten minutes ago
	ScopeElsewhere = "test:elsewhere" // for another audience
)

// IdP is a running provider.
type IdP struct {
	Issuer string
}

// Start builds the provider (the go build cache makes it quick after the
// first time) and starts it for the resource URL resource; it stops when
// the test ends.
func Start(t testing.TB, resource string) *IdP {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "idp")
	bin := filepath.Join(t.TempDir(), "idp")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test OpenID provider: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-resource", resource)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the test OpenID provider: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the test OpenID provider's issuer: %v", err)
	}
	return &IdP{Issuer: strings.TrimSpace(line)}
}

// Token signs user in with password through the provider's login page
// and returns the access token it issues for scopes (besides "openid").
func (p *IdP) Token(t testing.TB, user, password string, scopes ...string) string {
	t.Helper()
	tok, err := p.token(clientID, user, password, scopes)
	if err != nil {
		t.Fatalf("signing %s in: %v", user, err)
	}
	return tok
}

// OpaqueToken is Token through the client whose access tokens are opaque:
// their audience names the resource and IntrospectorID, and their
// introspection carries the user's groups. With ScopeExpired the token is
// inactive; with ScopeElsewhere it is active for another resource.
func (p *IdP) OpaqueToken(t testing.TB, user, password string, scopes ...string) string {
	t.Helper()
	tok, err := p.token(opaqueClientID, user, password, scopes)
	if err != nil {
		t.Fatalf("signing %s in: %v", user, err)
	}
	return tok
}

// Revoke revokes an opaque access token of OpaqueToken at the provider
// (RFC 7009): its introspection then says it is inactive.
func (p *IdP) Revoke(t testing.TB, token string) {
	t.Helper()
	resp, err := http.PostForm(p.Issuer+"/revoke", url.Values{"token": {token}, "token_type_hint": {"access_token"}, "client_id": {opaqueClientID}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("revoking a token: %s %s", resp.Status, b)
	}
}

func (p *IdP) token(clientID, user, password string, scopes []string) (string, error) {
	conf := &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirectURI,
		Scopes:      append([]string{"openid"}, scopes...),
		Endpoint:    oauth2.Endpoint{AuthURL: p.Issuer + "/auth", TokenURL: p.Issuer + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
	}
	verifier := oauth2.GenerateVerifier()
	jar, _ := cookiejar.New(nil)
	errCallback := errors.New("callback")
	var code string
	hc := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirectURI) {
			code = r.URL.Query().Get("code")
			return errCallback
		}
		return nil
	}}
	resp, err := hc.Get(conf.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return "", errors.New("the provider did not show its login page: " + resp.Request.URL.String())
	}
	login := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	resp, err = hc.PostForm(login.String(), url.Values{"id": {id}, "username": {user}, "password": {password}})
	if err != nil && !errors.Is(err, errCallback) {
		return "", err
	}
	if resp != nil {
		resp.Body.Close()
	}
	if code == "" {
		return "", errors.New("the provider gave no code (wrong password?)")
	}
	// The exchange by hand: x/oauth2 cannot read the expires_in of an
	// expired token (ScopeExpired), which the provider writes unsigned.
	resp, err = http.PostForm(conf.Endpoint.TokenURL, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"client_id": {clientID}, "code_verifier": {verifier},
	})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.AccessToken == "" {
		return "", fmt.Errorf("exchanging the code: %s %v %s", resp.Status, err, body.Error)
	}
	return body.AccessToken, nil
}

// MachineToken returns the access token of the machine client
// (client_credentials).
func (p *IdP) MachineToken(t testing.TB, scopes ...string) string {
	t.Helper()
	conf := &clientcredentials.Config{ClientID: MachineID, ClientSecret: MachineSecret, TokenURL: p.Issuer + "/oauth/token", Scopes: scopes}
	tok, err := conf.Token(context.Background())
	if err != nil {
		t.Fatalf("client_credentials: %v", err)
	}
	return tok.AccessToken
}

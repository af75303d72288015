package oauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// pemKey returns key as a PEM block: PKCS #8, or the older RSA form.
func pemKey(t *testing.T, key crypto.Signer, pkcs1 bool) string {
	t.Helper()
	if pkcs1 {
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))}))
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestClientCredentialsWithKey: a machine client that holds a private key
// gets its token with signed assertions (private_key_jwt) and no secret;
// the authorization server checks each assertion's signature, issuer,
// subject, audience, expiry and that its jti is new, so a second token
// request needs, and gets, a new assertion. A key the server does not know
// is refused with invalid_client, and no error quotes the key.
func TestClientCredentialsWithKey(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		key   crypto.Signer
		pkcs1 bool
	}{{"ES256, PKCS #8", ec, false}, {"RS256, PKCS #1", rs, true}} {
		t.Run(tc.name, func(t *testing.T) {
			as := oauthtest.New(t, oauthtest.Options{PreregisteredID: "svc", PreregisteredKey: tc.key.Public()})
			pemText := pemKey(t, tc.key, tc.pkcs1)
			cfg := oauth.Config{Server: "m2m", URL: as.URL(), Grant: oauth.GrantClientCredentials, ClientID: "svc", ClientKey: pemText}
			for i := range 2 { // a fresh store each time: a new token request
				h := newHandler(t, cfg, credstore.NewFile(t.TempDir()), nil)
				req, resp := unauthorized(t, as.URL())
				if err := h.Authorize(t.Context(), req, resp); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if code := withToken(t, h, as.URL()); code != http.StatusOK {
					t.Errorf("request %d, with the token: HTTP %d", i, code)
				}
			}
			if c := as.Counts(); c.Assertions != 2 || c.Registrations != 0 || c.CodeGrants != 0 {
				t.Errorf("counts %+v: want two assertions taken, no registration, no authorization", c)
			}
		})
	}

	as := oauthtest.New(t, oauthtest.Options{PreregisteredID: "svc", PreregisteredKey: ec.Public()})
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wrong := pemKey(t, other, false)
	h := newHandler(t, oauth.Config{Server: "m2m", URL: as.URL(), Grant: oauth.GrantClientCredentials, ClientID: "svc", ClientKey: wrong}, credstore.NewFile(t.TempDir()), nil)
	req, resp := unauthorized(t, as.URL())
	err = h.Authorize(t.Context(), req, resp)
	if err == nil || !strings.Contains(err.Error(), `authorizing "m2m": requesting a client_credentials token: the token endpoint answered HTTP 401: invalid_client`) {
		t.Errorf("with a key the server does not know: %v", err)
	}
	body := strings.Split(wrong, "\n")[1]
	if strings.Contains(fmt.Sprint(err), body) {
		t.Errorf("the error quotes the key: %v", err)
	}
}

// TestClientKeyRefused: a clientKey that is no usable key, or one given
// where it cannot be used, is refused when the handler is made, by an
// error that says what is wrong and never quotes the key.
func TestClientKeyRefused(t *testing.T) {
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := pemKey(t, ec, false)
	canary := "-----BEGIN PRIVATE KEY-----\nCANARYCANARYCANARYCANARY\n-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		name, key, grant, secret, want string
	}{
		{"not PEM", "CANARY-not-a-key", oauth.GrantClientCredentials, "", "the clientKey: it is not a PEM private key"},
		{"a certificate", strings.ReplaceAll(canary, "PRIVATE KEY", "CERTIFICATE"), oauth.GrantClientCredentials, "", `its PEM block is "CERTIFICATE", not a private key`},
		{"garbage in the block", canary, oauth.GrantClientCredentials, "", "its PEM private key does not parse"},
		{"a weak RSA key", pemKey(t, weak, true), oauth.GrantClientCredentials, "", "its RSA key has 1024 bits; 2048 at least"},
		{"with a login", good, oauth.GrantAuthorizationCode, "", "a clientKey authenticates the client_credentials and token_exchange grants only"},
		{"with a secret too", good, oauth.GrantClientCredentials, "s3cret", "a clientSecret or a clientKey, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oauth.New(oauth.Config{Server: "m2m", URL: "https://example.com/mcp", Grant: tc.grant, ClientID: "svc", ClientSecret: tc.secret, ClientKey: tc.key},
				&oauth.Options{Store: credstore.NewFile(t.TempDir())})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "CANARY") || strings.Contains(err.Error(), strings.Split(good, "\n")[1]) {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

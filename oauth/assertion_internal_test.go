package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestClientKeyAlgorithms: the algorithm follows from the key, the
// assertion says what RFC 7523 asks (issuer and subject the client, the
// audience the authorization server, a short life, a jti), and an
// authorization server that lists what it takes is heeded.
func TestClientKeyAlgorithms(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		key crypto.Signer
		alg jose.SignatureAlgorithm
	}{{p384, jose.ES384}, {ed, jose.EdDSA}} {
		der, err := x509.MarshalPKCS8PrivateKey(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		k, err := parseClientKey(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
		if err != nil {
			t.Fatal(err)
		}
		if k.alg != tc.alg {
			t.Errorf("%T: alg %s, want %s", tc.key, k.alg, tc.alg)
		}
		now := time.Now()
		a, err := k.assertion("svc", "https://as.example", now)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.ParseSigned(a, []jose.SignatureAlgorithm{tc.alg})
		if err != nil {
			t.Fatal(err)
		}
		var c jwt.Claims
		if err := tok.Claims(tc.key.Public(), &c); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(jwt.Expected{Issuer: "svc", Subject: "svc", AnyAudience: jwt.Audience{"https://as.example"}, Time: now}); err != nil {
			t.Error(err)
		}
		if c.ID == "" || c.Expiry.Time().Sub(now) > 5*time.Minute {
			t.Errorf("jti %q, expiry %v: want a jti and a short life", c.ID, c.Expiry.Time())
		}
		if tok.Headers[0].ExtraHeaders["typ"] != "JWT" {
			t.Errorf("typ %v", tok.Headers[0].ExtraHeaders["typ"])
		}
	}

	k := &clientKey{alg: jose.ES256}
	for _, tc := range []struct {
		methods, algs []string
		want          string
	}{
		{nil, nil, ""},
		{[]string{"client_secret_basic", "private_key_jwt"}, []string{"ES256"}, ""},
		{[]string{"client_secret_basic"}, nil, "does not take private_key_jwt client authentication (it lists client_secret_basic)"},
		{[]string{"private_key_jwt"}, []string{"RS256"}, "signed with RS256, and the clientKey signs with ES256"},
	} {
		err := checkAssertionMethod(k, tc.methods, tc.algs)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("methods %v algs %v: %v, want %q", tc.methods, tc.algs, err, tc.want)
		}
	}
}

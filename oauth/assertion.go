package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// A client that holds a private key authenticates to the token endpoint
// with a signed assertion, private_key_jwt (RFC 7523 section 2.2, OpenID
// Connect Core section 9), instead of a shared secret: the authorization
// server keeps only the public key, and nothing that could be replayed for
// long ever crosses the wire. MCP names it for machine clients with the
// client_credentials grant (SEP-1046).

const (
	methodPrivateKeyJWT = "private_key_jwt"
	assertionType       = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// assertionLife is how long an assertion is good for: one token
	// request, with room for clocks that disagree a little.
	assertionLife = 2 * time.Minute
)

// A clientKey is the private key a client signs its assertions with.
type clientKey struct {
	signer jose.Signer
	alg    jose.SignatureAlgorithm
}

// parseClientKey reads a PEM private key: PKCS #8 (what most tools write),
// or the older EC and RSA forms. The algorithm follows from the key: ES256,
// ES384 or ES512 by curve, RS256 for RSA, EdDSA for Ed25519. Errors never
// quote the key.
func parseClientKey(text string) (*clientKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(text)))
	if block == nil {
		return nil, errors.New("it is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("its PEM block is %q, not a private key (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, errors.New("its PEM private key does not parse (an encrypted key must be decrypted first)")
	}
	var alg jose.SignatureAlgorithm
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			alg = jose.ES256
		case elliptic.P384():
			alg = jose.ES384
		case elliptic.P521():
			alg = jose.ES512
		default:
			return nil, errors.New("its EC key is on a curve JOSE has no algorithm for (use P-256)")
		}
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("its RSA key has %d bits; 2048 at least", k.N.BitLen())
		}
		alg = jose.RS256
	case ed25519.PrivateKey:
		alg = jose.EdDSA
	default:
		return nil, fmt.Errorf("its key is a %T, not an EC, RSA or Ed25519 key", key)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key.(crypto.Signer)}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &clientKey{signer: signer, alg: alg}, nil
}

// assertion returns a new client assertion of clientID for the
// authorization server whose issuer identifier is audience: issuer and
// subject are the client, it is good for assertionLife, and its jti is
// random, so that a server may refuse a replay.
func (k *clientKey) assertion(clientID, audience string, now time.Time) (string, error) {
	claims := jwt.Claims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.Audience{audience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-30 * time.Second)),
		Expiry:    jwt.NewNumericDate(now.Add(assertionLife)),
		ID:        rand.Text(),
	}
	return jwt.Signed(k.signer).Claims(claims).Serialize()
}

// checkAssertionMethod reports why an authorization server that lists
// methods and algs cannot take key's assertions, or nil. An empty list
// says nothing, and is taken as yes.
func checkAssertionMethod(k *clientKey, methods, algs []string) error {
	if len(methods) > 0 && !slices.Contains(methods, methodPrivateKeyJWT) {
		return fmt.Errorf("the authorization server does not take private_key_jwt client authentication (it lists %s); hint: give the client a clientSecret instead of a clientKey", strings.Join(methods, ", "))
	}
	if len(algs) > 0 && !slices.Contains(algs, string(k.alg)) {
		return fmt.Errorf("the authorization server takes client assertions signed with %s, and the clientKey signs with %s; hint: make a key of a kind it takes", strings.Join(algs, ", "), k.alg)
	}
	return nil
}

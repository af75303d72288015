package credstore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
)

// The sealed format of the stores that encrypt values at rest: Postgres
// (a row's value) and EncryptedFile (a file's content). A sealed value is
// a header, a nonce and the ciphertext:
//
//	byte 0     format version: 1 (AES-256-GCM, 12-byte nonce)
//	bytes 1-4  key id: the first 4 bytes of SHA-256 over "switchboard
//	           credstore key id\x00" and the key
//	bytes 5-16 a random nonce, new on every Set
//	the rest   the ciphertext and its 16-byte tag
//
// The additional data that GCM authenticates is the header and the
// credential's key, so a value copied under another key, or a header
// edited, does not decrypt. The key id says which key a value was written
// with, so that a value written with another key fails with that error
// rather than as damaged, and so that the key can be rotated: a later
// version can hold the old key beside the new one, decrypt each value with
// the key its id names, and write it back with the new one.

// KeySize is the size of the key of a store that encrypts: an AES-256 key.
const KeySize = 32

const (
	sealFormat    = 1 // AES-256-GCM with a 12-byte nonce
	keyIDLen      = 4
	sealHeaderLen = 1 + keyIDLen
)

// ErrWrongKey reports a value written with another key than the store's.
var ErrWrongKey = errors.New("wrong credential store key")

// sealer seals and opens the values of one store under one key.
type sealer struct {
	aead  cipher.AEAD
	keyID [keyIDLen]byte
	// in names the store, for errors: "in PostgreSQL".
	in string
	// keyName names the key, for errors: "settings.store.key
	// (${SWITCHBOARD_STORE_KEY})"; never the key.
	keyName string
	// wrongKeyHint says what to do about a value written with another
	// key; damagedHint, about one that does not decrypt.
	wrongKeyHint, damagedHint string
}

// newSealer returns a sealer under key, which must be KeySize bytes; the
// error names the key as keyName does, never its bytes.
func newSealer(key []byte, keyName string) (*sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%s must be %d bytes, not %d (make one with: openssl rand -base64 32)", keyName, KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead, keyID: keyID(key), keyName: keyName}, nil
}

// keyID names a key without revealing it.
func keyID(key []byte) (id [keyIDLen]byte) {
	h := sha256.New()
	h.Write([]byte("switchboard credstore key id\x00"))
	h.Write(key)
	copy(id[:], h.Sum(nil))
	return id
}

// seal encrypts value for key under a fresh nonce.
func (s *sealer) seal(key string, value []byte) []byte {
	ns := s.aead.NonceSize()
	out := make([]byte, sealHeaderLen+ns, sealHeaderLen+ns+len(value)+s.aead.Overhead())
	out[0] = sealFormat
	copy(out[1:sealHeaderLen], s.keyID[:])
	rand.Read(out[sealHeaderLen:]) // never fails (crypto/rand)
	return s.aead.Seal(out, out[sealHeaderLen:], value, additional(out[:sealHeaderLen], key))
}

// open decrypts the value sealed under key. Its errors name the
// credential's key and the store's key, never a value.
func (s *sealer) open(key string, sealed []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(sealed) < sealHeaderLen+ns+s.aead.Overhead() || sealed[0] != sealFormat {
		return nil, fmt.Errorf("credential %q %s is not in a format this switchboard reads (format %d): a newer version wrote it, or it is damaged", key, s.in, formatOf(sealed))
	}
	if !bytes.Equal(sealed[1:sealHeaderLen], s.keyID[:]) {
		return nil, fmt.Errorf("%w: credential %q %s was written with a different key than %s holds now (hint: %s)", ErrWrongKey, key, s.in, s.keyName, s.wrongKeyHint)
	}
	v, err := s.aead.Open(nil, sealed[sealHeaderLen:sealHeaderLen+ns], sealed[sealHeaderLen+ns:], additional(sealed[:sealHeaderLen], key))
	if err != nil {
		return nil, fmt.Errorf("credential %q %s does not decrypt with %s, which wrote it: %s (hint: store it again)", key, s.in, s.keyName, s.damagedHint)
	}
	return v, nil
}

func formatOf(sealed []byte) int {
	if len(sealed) == 0 {
		return 0
	}
	return int(sealed[0])
}

// additional is the data GCM authenticates with a value: its header and
// the key it is stored under.
func additional(header []byte, key string) []byte {
	return append(slices.Clip(header), key...)
}

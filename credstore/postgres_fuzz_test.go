package credstore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"testing"
)

// FuzzPostgresOpen: whatever bytes a row holds (the database is shared,
// and its rows can be edited), open never panics, and it returns a value
// only for what seal made for that key.
func FuzzPostgresOpen(f *testing.F) {
	key := bytes.Repeat([]byte{7}, PostgresKeySize)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	p := &Postgres{aead: aead, keyID: keyID(key), keyRef: "${K}"}
	// seal's nonce is random, and the fuzzer's workers are processes of
	// their own: the seed is sealed as seal does, with a fixed nonce.
	good := append([]byte{pgFormat}, p.keyID[:]...)
	good = append(good, bytes.Repeat([]byte{3}, aead.NonceSize())...)
	good = aead.Seal(good, good[pgHeaderLen:], []byte("value"), additional(good[:pgHeaderLen], "secret/a"))
	if v, err := p.open("secret/a", p.seal("secret/a", []byte("value"))); err != nil || string(v) != "value" {
		f.Fatalf("open(seal) = %q, %v", v, err)
	}
	f.Add("secret/a", good)
	f.Add("secret/b", good)
	f.Add("secret/a", good[:len(good)-1])
	f.Add("secret/a", []byte{1})
	f.Add("secret/a", []byte{})
	f.Fuzz(func(t *testing.T, k string, sealed []byte) {
		v, err := p.open(k, sealed)
		if err != nil {
			return
		}
		if k != "secret/a" || !bytes.Equal(sealed, good) || string(v) != "value" {
			t.Fatalf("open(%q, % x) = %q, want an error: only seal makes what opens", k, sealed, v)
		}
	})
}

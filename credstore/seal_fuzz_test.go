package credstore

import (
	"bytes"
	"testing"
)

// FuzzSealedOpen: whatever bytes a sealed value holds (a PostgreSQL row is
// shared and can be edited; a file of the encrypted file store can be
// replaced), open never panics, and it returns a value only for what seal
// made for that key.
func FuzzSealedOpen(f *testing.F) {
	key := bytes.Repeat([]byte{7}, KeySize)
	s, err := newSealer(key, "${K}")
	if err != nil {
		f.Fatal(err)
	}
	// seal's nonce is random, and the fuzzer's workers are processes of
	// their own: the seed is sealed as seal does, with a fixed nonce.
	good := append([]byte{sealFormat}, s.keyID[:]...)
	good = append(good, bytes.Repeat([]byte{3}, s.aead.NonceSize())...)
	good = s.aead.Seal(good, good[sealHeaderLen:], []byte("value"), additional(good[:sealHeaderLen], "secret/a"))
	if v, err := s.open("secret/a", s.seal("secret/a", []byte("value"))); err != nil || string(v) != "value" {
		f.Fatalf("open(seal) = %q, %v", v, err)
	}
	f.Add("secret/a", good)
	f.Add("secret/b", good)
	f.Add("secret/a", good[:len(good)-1])
	f.Add("secret/a", []byte{1})
	f.Add("secret/a", []byte{})
	f.Fuzz(func(t *testing.T, k string, sealed []byte) {
		v, err := s.open(k, sealed)
		if err != nil {
			return
		}
		if k != "secret/a" || !bytes.Equal(sealed, good) || string(v) != "value" {
			t.Fatalf("open(%q, % x) = %q, want an error: only seal makes what opens", k, sealed, v)
		}
	})
}

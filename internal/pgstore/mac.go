package pgstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Rows that one replica writes and another acts on (where a replica is
// reached, which tool definition was accepted) carry a MAC made with a key
// derived from settings.store.key. Anyone who can write to the database
// but does not hold the key (a leaked database password, a restored
// backup, another program sharing the database) cannot forge one: a row
// whose MAC does not verify is ignored.

// DeriveKey returns the key for one purpose derived from the store's key:
// HMAC-SHA256(storeKey, "switchboard "+purpose). Each purpose has a key of
// its own, so a MAC made for one purpose never passes for another.
func DeriveKey(storeKey []byte, purpose string) []byte {
	m := hmac.New(sha256.New, storeKey)
	m.Write([]byte("switchboard " + purpose))
	return m.Sum(nil)
}

// MAC returns the HMAC-SHA256 of fields under key, in hex. Each field is
// length-prefixed, so no two different lists of fields share a MAC.
func MAC(key []byte, fields ...string) string {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// ValidMAC reports whether mac is the MAC of fields under key, in time
// that does not depend on where they differ. An empty key verifies
// nothing.
func ValidMAC(key []byte, mac string, fields ...string) bool {
	if len(key) == 0 {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(MAC(key, fields...)))
}

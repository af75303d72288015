// Package credstore keeps credentials: the secrets that ${secret:NAME}
// references name, and the OAuth tokens and client registrations of remote
// servers. Nothing else in Switchboard writes a credential to disk.
//
// A Store maps keys to opaque values. Keys are short printable strings with
// a kind prefix ("secret/NAME", "oauth/SERVER/…"); values are bytes the
// caller encodes. Three implementations exist: File, a directory of 0600
// files in a 0700 directory under the state directory, written atomically;
// the OS keychain (see Open); and Postgres, a table in the PostgreSQL
// database that replicas share (settings.store), encrypted at rest. Each
// takes a lock per key across processes (across replicas, for Postgres),
// so that two processes refreshing one token end with one valid token
// stored.
package credstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// A Store holds credentials by key.
type Store interface {
	// Name says which store this is, for status output: "file",
	// "keychain" or "postgres".
	Name() string
	// Get returns the value stored under key; ok is false when there is
	// none.
	Get(key string) (value []byte, ok bool, err error)
	// Set stores value under key, replacing any value there.
	Set(key string, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key string) error
	// Keys returns the stored keys that start with prefix, sorted.
	Keys(prefix string) ([]string, error)
	// Lock takes an exclusive lock on key, across processes, until unlock
	// is called or ctx ends. Holders read, change and write a value under
	// it (a token refresh), so that concurrent changes are not lost.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// ErrBadKey is the error for a key that cannot be stored.
var ErrBadKey = errors.New("bad credential key")

// maxKey bounds a key's length: keys become file names, in base32 (8
// characters for 5 bytes) with an extension, which must stay within the 255
// bytes most file systems allow a name.
const maxKey = 150

// CheckKey returns an error unless key is 1 to 150 bytes of printable,
// non-space characters, without "..", and not starting or ending with "/".
func CheckKey(key string) error {
	switch {
	case key == "" || len(key) > maxKey:
		return fmt.Errorf("%w %q: it must be 1 to %d bytes", ErrBadKey, key, maxKey)
	case strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, ".."):
		return fmt.Errorf("%w %q: no leading or trailing / and no ..", ErrBadKey, key)
	}
	for _, r := range key {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%w %q: it holds a space or a control character", ErrBadKey, key)
		}
	}
	return nil
}

// SecretKey is the key of the secret that ${secret:NAME} names.
func SecretKey(name string) string { return "secret/" + name }

package credstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// EncryptedFile is a Store in a directory, as File is (one 0600 file per
// key in a 0700 directory, written atomically), whose values are sealed
// with AES-256-GCM under a 32-byte key that is never written beside them:
// the sealed format seal.go describes, a random nonce per value, the
// credential's key authenticated with it. It is settings.credentialStore
// "encrypted-file", for a machine without a keychain, with its key in
// settings.credentialStoreKey.
//
// The file names are the credentials' keys in base32, as File's: they say
// which secrets and which servers' tokens are stored, never a value.
type EncryptedFile struct {
	file *File
	seal *sealer
}

// EncryptedFileOptions are the optional settings of OpenEncryptedFile.
type EncryptedFileOptions struct {
	// KeyRef says where the key came from, for errors: the reference in
	// settings.credentialStoreKey, such as ${SWITCHBOARD_CREDENTIAL_KEY}.
	// Errors name it, never the key.
	KeyRef string
}

// OpenEncryptedFile returns the encrypted file store in dir (created 0700
// on first write), whose values key encrypts; key must be KeySize bytes.
// When dir holds values already, it opens them, newest first, until one
// opens, so that a key other than the one they were written with fails
// here, with ErrWrongKey, rather than at the first token refresh.
func OpenEncryptedFile(dir string, key []byte, opts *EncryptedFileOptions) (*EncryptedFile, error) {
	var ref string
	if opts != nil {
		ref = opts.KeyRef
	}
	name, setIt := "the credential store's key", "give the key"
	if ref != "" {
		name, setIt = ref, "set "+ref+" to the key"
	}
	s, err := newSealer(key, name)
	if err != nil {
		return nil, err
	}
	s.in = "in the encrypted file store " + dir
	s.wrongKeyHint = setIt + " the store was written with; or, to start over, remove " + dir + ", then store the secrets again and log in again"
	s.damagedHint = "the file was altered, or copied from another credential's"
	e := &EncryptedFile{file: NewFile(dir), seal: s}
	if err := e.checkKey(); err != nil {
		return nil, err
	}
	return e, nil
}

// Name implements Store.
func (e *EncryptedFile) Name() string { return KindEncryptedFile }

// Dir returns the store's directory.
func (e *EncryptedFile) Dir() string { return e.file.Dir() }

// Get implements Store.
func (e *EncryptedFile) Get(key string) ([]byte, bool, error) {
	sealed, ok, err := e.file.Get(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	v, err := e.seal.open(key, sealed)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Set implements Store.
func (e *EncryptedFile) Set(key string, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return e.file.Set(key, e.seal.seal(key, value))
}

// Delete implements Store.
func (e *EncryptedFile) Delete(key string) error { return e.file.Delete(key) }

// Keys implements Store.
func (e *EncryptedFile) Keys(prefix string) ([]string, error) { return e.file.Keys(prefix) }

// Lock implements Store, as File does.
func (e *EncryptedFile) Lock(ctx context.Context, key string) (func(), error) {
	return e.file.Lock(ctx, key)
}

// checkKey fails with ErrWrongKey when the store holds values and none of
// them opens with the key because they were written with another. It
// tries the newest first, and stops at the first that opens: a value that
// is damaged (altered on disk) is not the key's fault, and fails only its
// own Get, so that it can be stored again.
func (e *EncryptedFile) checkKey() error {
	keys, err := e.file.Keys("")
	if err != nil {
		return err
	}
	at := make(map[string]time.Time, len(keys))
	for _, k := range keys {
		if info, err := os.Stat(e.file.path(k, valueExt)); err == nil {
			at[k] = info.ModTime()
		}
	}
	slices.SortStableFunc(keys, func(a, b string) int { return at[b].Compare(at[a]) })
	var wrong error
	for _, k := range keys {
		_, _, err := e.Get(k)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrWrongKey) && wrong == nil:
			wrong = err
		}
	}
	return wrong
}

// moveTimeout bounds the wait for one credential's locks while moving the
// file store's credentials in: another process holds one for a token
// request at most.
const moveTimeout = 30 * time.Second

// moveFrom moves every credential of the unencrypted file store src into
// e, and removes it from src: each under both stores' locks on its key, so
// that a process refreshing a token in either store is not overtaken. A
// value in src replaces one e holds under the same key: src's is the
// newer, since a move empties src. It returns how many it moved.
func (e *EncryptedFile) moveFrom(src *File) (int, error) {
	keys, err := src.Keys("")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		moved, err := e.moveOne(src, k)
		if err != nil {
			return n, fmt.Errorf("moving the credentials of the unencrypted file store %s into the encrypted one: %w", src.Dir(), err)
		}
		if moved {
			n++
		}
	}
	return n, nil
}

func (e *EncryptedFile) moveOne(src *File, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), moveTimeout)
	defer cancel()
	unlockSrc, err := src.Lock(ctx, key)
	if err != nil {
		return false, err
	}
	defer unlockSrc()
	unlockDst, err := e.Lock(ctx, key)
	if err != nil {
		return false, err
	}
	defer unlockDst()
	v, ok, err := src.Get(key)
	if err != nil || !ok { // !ok: another process moved it meanwhile
		return false, err
	}
	if err := e.Set(key, v); err != nil {
		return false, err
	}
	// The lock file stays: another process may wait on it, and removing
	// it would let a third take a lock of its own beside that one's.
	if err := src.Delete(key); err != nil {
		return false, err
	}
	return true, nil
}

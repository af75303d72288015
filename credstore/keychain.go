package credstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zalando/go-keyring"
)

// Keychain is a Store in the OS keychain, through go-keyring: the login
// keychain on macOS, the Credential Manager on Windows, and a Secret Service
// (GNOME Keyring, KWallet) on Linux and the BSDs. Each key is one item of
// the store's service, its account the key, its password the value, so the
// keychain's own program shows and edits them.
//
// A keychain cannot list its items through go-keyring, so the store keeps an
// index of its keys, names only and never a value, in a file in its
// directory; Keys reads it and drops the keys whose item is gone (removed
// in the keychain's own program). The directory also holds the lock files
// that Lock takes, as File does.
type Keychain struct {
	service string
	dir     string
	locks   *File // the locks of Lock, and of the index
}

// NewKeychain returns a Keychain store of the given keychain service whose
// index and locks live in dir. It does not contact the keychain: see
// KeychainAvailable.
func NewKeychain(service, dir string) *Keychain {
	return &Keychain{service: service, dir: dir, locks: NewFile(dir)}
}

// Name implements Store.
func (k *Keychain) Name() string { return "keychain" }

// Service returns the keychain service that holds the items.
func (k *Keychain) Service() string { return k.service }

// Dir returns the directory of the index and the locks.
func (k *Keychain) Dir() string { return k.dir }

// Get implements Store.
func (k *Keychain) Get(key string) ([]byte, bool, error) {
	if err := CheckKey(key); err != nil {
		return nil, false, err
	}
	if err := sessionBus(); err != nil {
		return nil, false, fmt.Errorf("reading credential %q from the keychain: %w", key, err)
	}
	v, err := keyring.Get(k.service, key)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading credential %q from the keychain: %w", key, err)
	}
	return []byte(v), true, nil
}

// Set implements Store. The key enters the index before the item is
// written, so that no item is ever stored that Keys does not know of.
func (k *Keychain) Set(key string, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := sessionBus(); err != nil {
		return fmt.Errorf("storing credential %q in the keychain: %w", key, err)
	}
	if err := k.editIndex(func(keys []string) []string {
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		return keys
	}); err != nil {
		return err
	}
	err := keyring.Set(k.service, key, string(value))
	if errors.Is(err, keyring.ErrSetDataTooBig) {
		return fmt.Errorf("storing credential %q in the keychain: %d bytes is more than this keychain holds in one item (hint: set settings.credentialStore to \"encrypted-file\", with a key in SWITCHBOARD_CREDENTIAL_KEY; see docs/configuration.md, The credential store)", key, len(value))
	}
	if err != nil {
		return fmt.Errorf("storing credential %q in the keychain: %w", key, err)
	}
	return nil
}

// Delete implements Store.
func (k *Keychain) Delete(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := sessionBus(); err != nil {
		return fmt.Errorf("deleting credential %q from the keychain: %w", key, err)
	}
	if err := keyring.Delete(k.service, key); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("deleting credential %q from the keychain: %w", key, err)
	}
	return k.editIndex(func(keys []string) []string {
		return slices.DeleteFunc(keys, func(k string) bool { return k == key })
	})
}

// Keys implements Store. A key whose item is missing from the keychain is
// left out.
func (k *Keychain) Keys(prefix string) ([]string, error) {
	keys, err := k.readIndex()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, key := range keys {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		if _, ok, err := k.Get(key); err != nil {
			return nil, err
		} else if ok {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Lock implements Store with the file lock of File, in the store's
// directory.
func (k *Keychain) Lock(ctx context.Context, key string) (func(), error) {
	return k.locks.Lock(ctx, key)
}

const (
	indexFile = "index.json"
	// indexLock is the lock file of the index. Lock files of keys end in
	// .lock too, but their names are base32, which has no '-'.
	indexLock = "index-json.lock"
)

// index is the content of the index file.
type index struct {
	Service string   `json:"service"`
	Keys    []string `json:"keys"`
}

func (k *Keychain) readIndex() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(k.dir, indexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the keychain index: %w", err)
	}
	var ix index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("reading the keychain index %s: %w (hint: remove the file; the keychain items stay, unlisted)", filepath.Join(k.dir, indexFile), err)
	}
	return slices.DeleteFunc(ix.Keys, func(key string) bool { return CheckKey(key) != nil }), nil
}

// editIndex changes the index under its lock, which also orders it
// between processes.
func (k *Keychain) editIndex(edit func([]string) []string) error {
	if err := k.locks.ensureDir(); err != nil {
		return err
	}
	unlock, err := lockPath(context.Background(), filepath.Join(k.dir, indexLock))
	if err != nil {
		return fmt.Errorf("locking the keychain index: %w", err)
	}
	defer unlock()
	keys, err := k.readIndex()
	if err != nil {
		return err
	}
	keys = edit(keys)
	slices.Sort(keys)
	b, err := json.MarshalIndent(index{Service: k.service, Keys: slices.Compact(keys)}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(k.dir, indexFile, append(b, '\n')); err != nil {
		return fmt.Errorf("writing the keychain index: %w", err)
	}
	return nil
}

// KeychainAvailable reports why the OS keychain cannot be used here, or nil
// when it answers: it stores, reads back and deletes a probe item of the
// service.
func KeychainAvailable(service string) error {
	if err := sessionBus(); err != nil {
		return err
	}
	// A key of its own per process: two probing at once must not meet.
	probeKey := fmt.Sprintf("probe-%d", os.Getpid())
	want := "probe"
	if err := keyring.Set(service, probeKey, want); err != nil {
		return fmt.Errorf("the keychain cannot store an item: %w", err)
	}
	got, err := keyring.Get(service, probeKey)
	delErr := keyring.Delete(service, probeKey)
	switch {
	case err != nil:
		return fmt.Errorf("the keychain cannot read back an item: %w", err)
	case got != want:
		return errors.New("the keychain returned another value than it was given")
	case delErr != nil:
		return fmt.Errorf("the keychain cannot delete an item: %w", delErr)
	}
	return nil
}

package credstore

import (
	"fmt"
	"path/filepath"
)

// The kinds of store settings.credentialStore names.
const (
	KindKeychain = "keychain"
	KindFile     = "file"
)

// Service is the keychain service that holds Switchboard's items.
const Service = "switchboard"

// Dirs of the stores inside the state directory.
const (
	fileDir     = "credentials" // the File store
	keychainDir = "keychain"    // the Keychain store's index and locks
)

// Open returns the store that settings.credentialStore names, kept under
// stateDir: "file", "keychain", or "" for the default. The default is the
// store that already holds credentials, the keychain first; with none, the
// keychain where one answers a probe (an item stored, read back and
// deleted), else the file store. Only that probe contacts the keychain: a
// keychain that is chosen but locked or gone fails the first operation,
// with the keychain's own error. So once something is stored the choice
// stays put, even in a process that cannot reach the keychain (a service
// started without the desktop session's D-Bus): that one gets an error
// saying so, not an empty store. why says how the default was chosen, for
// status; it is empty for a named kind.
func Open(kind, stateDir string) (s Store, why string, err error) {
	file := NewFile(filepath.Join(stateDir, fileDir))
	kc := NewKeychain(Service, filepath.Join(stateDir, keychainDir))
	switch kind {
	case KindFile:
		return file, "", nil
	case KindKeychain:
		if err := sessionBus(); err != nil {
			return nil, "", fmt.Errorf("settings.credentialStore is \"keychain\", but %w (hint: set it to \"file\" to keep credentials in %s)", err, file.Dir())
		}
		return kc, "", nil
	case "":
		return openDefault(file, kc)
	}
	return nil, "", fmt.Errorf("unknown credential store %q: use \"keychain\" or \"file\"", kind)
}

func openDefault(file *File, kc *Keychain) (Store, string, error) {
	if keys, err := kc.readIndex(); err != nil {
		return nil, "", err
	} else if len(keys) > 0 {
		if err := sessionBus(); err != nil {
			return nil, "", fmt.Errorf("credentials are kept in the keychain (listed in %s), but %w (hint: run switchboard where the keychain is reachable, or set settings.credentialStore)", filepath.Join(kc.Dir(), indexFile), err)
		}
		return kc, "it holds credentials already", nil
	}
	if keys, err := file.Keys(""); err != nil {
		return nil, "", err
	} else if len(keys) > 0 {
		return file, "it holds credentials already", nil
	}
	if err := KeychainAvailable(Service); err != nil {
		return file, "no keychain: " + err.Error(), nil
	}
	return kc, "the keychain answers", nil
}

// Describe says which store s is and where it keeps its items, for status.
func Describe(s Store) string {
	switch s := s.(type) {
	case *File:
		return "file store in " + s.Dir()
	case *Keychain:
		return fmt.Sprintf("OS keychain, service %q", s.Service())
	case *Postgres:
		return "PostgreSQL store (" + s.Where() + ")"
	}
	return s.Name()
}

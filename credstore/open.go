package credstore

import (
	"fmt"
	"path/filepath"
)

// The kinds of store settings.credentialStore names.
const (
	KindKeychain      = "keychain"
	KindFile          = "file"
	KindEncryptedFile = "encrypted-file"
)

// Service is the keychain service that holds Switchboard's items.
const Service = "switchboard"

// Dirs of the stores inside the state directory.
const (
	fileDir      = "credentials"           // the File store
	encryptedDir = "credentials-encrypted" // the EncryptedFile store
	keychainDir  = "keychain"              // the Keychain store's index and locks
)

// OpenOptions are the optional settings of Open.
type OpenOptions struct {
	// Key is the key of the encrypted file store, KeySize bytes: needed
	// for KindEncryptedFile, unused otherwise.
	Key []byte
	// KeyRef says where Key came from, for errors: the reference in
	// settings.credentialStoreKey, such as ${SWITCHBOARD_CREDENTIAL_KEY}.
	KeyRef string
	// Note receives what the user should hear once: that the credentials
	// of the unencrypted file store were moved into the encrypted one.
	// Nil: nobody is told.
	Note func(msg string)
}

// EncryptHint says how to stop keeping credentials unencrypted, for the
// warning about the file store.
const EncryptHint = `set settings.credentialStore to "encrypted-file" and SWITCHBOARD_CREDENTIAL_KEY to a key (make one with: openssl rand -base64 32; settings.credentialStoreKey can name another variable or a command), and the stored credentials move into it; or run where an OS keychain answers (docs/configuration.md, The credential store)`

// Open returns the store that settings.credentialStore names, kept under
// stateDir: "file", "encrypted-file", "keychain", or "" for the default.
// The default is the store that already holds credentials, the keychain
// first; with none, the keychain where one answers a probe (an item
// stored, read back and deleted), else the file store. Only that probe
// contacts the keychain: a keychain that is chosen but locked or gone
// fails the first operation, with the keychain's own error. So once
// something is stored the choice stays put, even in a process that cannot
// reach the keychain (a service started without the desktop session's
// D-Bus): that one gets an error saying so, not an empty store. why says
// how the default was chosen, for status; it is empty for a named kind.
//
// The file store keeps values unencrypted (see Unencrypted). The
// encrypted file store, which opts.Key encrypts, is never the default;
// when it is opened, the credentials of the file store beside it move into
// it (opts.Note hears how many), so that switching to it leaves nothing
// unencrypted behind and loses no login.
func Open(kind, stateDir string, opts *OpenOptions) (s Store, why string, err error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	file := NewFile(filepath.Join(stateDir, fileDir))
	kc := NewKeychain(Service, filepath.Join(stateDir, keychainDir))
	switch kind {
	case KindFile:
		return file, "", nil
	case KindEncryptedFile:
		s, err := openEncrypted(file, filepath.Join(stateDir, encryptedDir), opts)
		if err != nil {
			return nil, "", err
		}
		return s, "", nil
	case KindKeychain:
		if err := sessionBus(); err != nil {
			return nil, "", fmt.Errorf("settings.credentialStore is \"keychain\", but %w (hint: set it to \"encrypted-file\", with a key in SWITCHBOARD_CREDENTIAL_KEY, to keep credentials encrypted in %s, or to \"file\" to keep them unencrypted in %s; see docs/configuration.md, Credential store)", err, filepath.Join(stateDir, encryptedDir), file.Dir())
		}
		return kc, "", nil
	case "":
		return openDefault(file, kc)
	}
	return nil, "", fmt.Errorf("unknown credential store %q: use \"keychain\", \"encrypted-file\" or \"file\"", kind)
}

// openEncrypted opens the encrypted file store in dir and moves the file
// store's credentials into it.
func openEncrypted(file *File, dir string, opts *OpenOptions) (*EncryptedFile, error) {
	if len(opts.Key) == 0 {
		return nil, fmt.Errorf(`settings.credentialStore is "encrypted-file", and no key was given (hint: set SWITCHBOARD_CREDENTIAL_KEY, or the variable settings.credentialStoreKey names, to a key; make one with: openssl rand -base64 32)`)
	}
	e, err := OpenEncryptedFile(dir, opts.Key, &EncryptedFileOptions{KeyRef: opts.KeyRef})
	if err != nil {
		return nil, err
	}
	n, err := e.moveFrom(file)
	if n > 0 && opts.Note != nil {
		opts.Note(fmt.Sprintf("moved %d %s from the unencrypted file store in %s into the encrypted file store in %s, and removed %s there",
			n, plural(n, "credential"), file.Dir(), e.Dir(), plural(n, "it", "them")))
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

func plural(n int, one string, many ...string) string {
	switch {
	case n == 1:
		return one
	case len(many) > 0:
		return many[0]
	}
	return one + "s"
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

// Unencrypted returns the directory where s keeps values unencrypted, and
// true, when s is the file store; "" and false for any other store.
func Unencrypted(s Store) (dir string, ok bool) {
	if f, ok := s.(*File); ok {
		return f.Dir(), true
	}
	return "", false
}

// Plaintext returns, without contacting the keychain, the file store the
// store Open(kind, stateDir) chooses when that is the unencrypted file
// store, and how many credentials it holds: kind "file", or the default
// when the file store holds credentials and the keychain's index lists
// none. It returns nil when the choice is another store, or when it rests
// on the keychain's probe (the default, with nothing stored anywhere): for
// status, which touches no keychain.
func Plaintext(kind, stateDir string) (f *File, n int, err error) {
	file := NewFile(filepath.Join(stateDir, fileDir))
	switch kind {
	case KindFile:
	case "":
		listed, err := NewKeychain(Service, filepath.Join(stateDir, keychainDir)).readIndex()
		if err != nil || len(listed) > 0 {
			return nil, 0, err
		}
	default:
		return nil, 0, nil
	}
	keys, err := file.Keys("")
	if err != nil {
		return nil, 0, err
	}
	if kind == "" && len(keys) == 0 {
		return nil, 0, nil
	}
	return file, len(keys), nil
}

// Describe says which store s is and where it keeps its items, for status.
func Describe(s Store) string {
	switch s := s.(type) {
	case *File:
		return "file store in " + s.Dir()
	case *EncryptedFile:
		return "encrypted file store in " + s.Dir()
	case *Keychain:
		return fmt.Sprintf("OS keychain, service %q", s.Service())
	case *Postgres:
		return "PostgreSQL store (" + s.Where() + ")"
	}
	return s.Name()
}

package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// credentials returns the credential store of cfg: the one
// settings.credentialStore names (credstore.Open), in the state directory.
// It is opened on first use, so that a command that reads no secret and no
// token never probes the keychain, nor runs the command that prints the
// encrypted file store's key. Every part of the CLI that keeps or reads
// credentials (${secret:NAME}, OAuth tokens) takes its store from
// env.openState, which uses this one without settings.store. When the
// store opened is the unencrypted file store, the process warns once on
// standard error (warnUnencrypted).
func (e *env) credentials(ctx context.Context, cfg *config.Config) *lazyStore {
	return &lazyStore{ctx: ctx, e: e, settings: cfg.Settings, stateDir: cfg.Dirs.StateDir(), warn: e.stderr}
}

// lazyStore is a credstore.Store opened on first use; a store that failed
// to open fails every operation with that error.
type lazyStore struct {
	ctx      context.Context // for the ${cmd:…} of settings.credentialStoreKey
	e        *env
	settings config.Settings
	stateDir string
	// warn receives the warning about the unencrypted file store, and the
	// note that credentials moved into the encrypted one; nil: nobody
	// (doctor, whose findings say it).
	warn io.Writer

	once  sync.Once
	store credstore.Store
	why   string
	err   error
}

func (l *lazyStore) open() (credstore.Store, error) {
	l.once.Do(func() { l.store, l.why, l.err = l.e.openCredentials(l.ctx, l.settings, l.stateDir, l.warn) })
	return l.store, l.err
}

// openCredentials opens the store settings.credentialStore names, with
// the key of the encrypted file store, and warns w (once per process)
// when it is the unencrypted file store. why says how the default was
// chosen. w nil: no warning and no note.
func (e *env) openCredentials(ctx context.Context, st config.Settings, stateDir string, w io.Writer) (credstore.Store, string, error) {
	key, err := st.CredentialKey(ctx, e.lookupEnv)
	if err != nil {
		return nil, "", fmt.Errorf("opening the credential store: %w", err)
	}
	opts := &credstore.OpenOptions{Key: key, KeyRef: st.CredentialKeyRef()}
	if w != nil {
		opts.Note = func(msg string) { fmt.Fprintf(w, "note: %s\n", msg) }
	}
	s, why, err := credstore.Open(st.CredentialStore, stateDir, opts)
	if err != nil {
		return nil, "", fmt.Errorf("opening the credential store: %w", err)
	}
	if dir, ok := credstore.Unencrypted(s); ok && w != nil {
		warnUnencrypted(w, dir, unencryptedWhy(st.CredentialStore, why))
	}
	return s, why, nil
}

// unencryptedOnce makes the warning about the unencrypted file store once
// per process, however many stores a command opens.
var unencryptedOnce sync.Once

// warnUnencrypted warns, once per process, that credentials are kept
// unencrypted in dir, why, and how to encrypt them.
func warnUnencrypted(w io.Writer, dir, why string) {
	unencryptedOnce.Do(func() {
		fmt.Fprintf(w, "warning: credentials (secrets and OAuth tokens) are kept unencrypted in %s, since %s: whoever can read your files can read them (hint: %s)\n", dir, why, credstore.EncryptHint)
	})
}

// unencryptedWhy says why the file store was chosen: kind is
// settings.credentialStore, why what credstore.Open said of the default.
func unencryptedWhy(kind, why string) string {
	switch {
	case kind == credstore.KindFile:
		return `settings.credentialStore is "file"`
	case why == "it holds credentials already":
		return "settings.credentialStore is left out, and the default is the store that holds credentials already"
	case why == "":
		return "settings.credentialStore is left out"
	}
	return "settings.credentialStore is left out, and the default falls back to it (" + why + ")"
}

// Name implements credstore.Store: the opened store's name, or the kind
// asked for ("keychain", "file", "encrypted-file", "default") when it
// could not be opened.
func (l *lazyStore) Name() string {
	if s, err := l.open(); err == nil {
		return s.Name()
	}
	if l.settings.CredentialStore == "" {
		return "default"
	}
	return l.settings.CredentialStore
}

func (l *lazyStore) Get(key string) ([]byte, bool, error) {
	s, err := l.open()
	if err != nil {
		return nil, false, err
	}
	return s.Get(key)
}

func (l *lazyStore) Set(key string, value []byte) error {
	s, err := l.open()
	if err != nil {
		return err
	}
	return s.Set(key, value)
}

func (l *lazyStore) Delete(key string) error {
	s, err := l.open()
	if err != nil {
		return err
	}
	return s.Delete(key)
}

func (l *lazyStore) Keys(prefix string) ([]string, error) {
	s, err := l.open()
	if err != nil {
		return nil, err
	}
	return s.Keys(prefix)
}

func (l *lazyStore) Lock(ctx context.Context, key string) (func(), error) {
	s, err := l.open()
	if err != nil {
		return nil, err
	}
	return s.Lock(ctx, key)
}

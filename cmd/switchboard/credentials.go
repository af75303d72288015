package main

import (
	"context"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// credentials returns the credential store of cfg: the one
// settings.credentialStore names (credstore.Open), in the state directory.
// It is opened on first use, so that a command that reads no secret and no
// token never probes the keychain. Every part of the CLI that keeps or
// reads credentials (${secret:NAME}, OAuth tokens) takes its store from
// env.openState, which uses this one without settings.store.
func credentials(cfg *config.Config) credstore.Store {
	return &lazyStore{kind: cfg.Settings.CredentialStore, stateDir: cfg.Dirs.StateDir()}
}

// lazyStore is a credstore.Store opened on first use; a store that failed
// to open fails every operation with that error.
type lazyStore struct {
	kind, stateDir string

	once  sync.Once
	store credstore.Store
	err   error
}

func (l *lazyStore) open() (credstore.Store, error) {
	l.once.Do(func() { l.store, _, l.err = credstore.Open(l.kind, l.stateDir) })
	return l.store, l.err
}

// Name implements credstore.Store: the opened store's name, or the kind
// asked for ("keychain", "file", "default") when it could not be opened.
func (l *lazyStore) Name() string {
	if s, err := l.open(); err == nil {
		return s.Name()
	}
	if l.kind == "" {
		return "default"
	}
	return l.kind
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

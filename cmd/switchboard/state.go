package main

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// state is what a command keeps outside its configuration files: the
// credential store, and with settings.store the PostgreSQL database that
// replicas share (switchboard.OpenStore), where the catalog and the audit
// trail live too. Every command that uses credentials or an engine takes
// them from here (env.openState), serve included.
type state struct {
	// shared is settings.store's database and the credential store in
	// it; nil without settings.store.
	shared *switchboard.Store
	// creds is where credentials are kept: shared's, or the keychain or
	// file store (encrypted or not) that settings.credentialStore names, opened on first use.
	creds credstore.Store
}

// db is the shared database, for switchboard.Options.Store; nil without
// settings.store.
func (s *state) db() *sql.DB {
	if s.shared == nil {
		return nil
	}
	return s.shared.DB
}

// ready says whether the shared store answers, for readiness: nil without
// settings.store (nothing to reach), else whether the database answers
// with the credential store's table in it (migrated when opened).
func (s *state) ready(ctx context.Context) error {
	if s.shared == nil {
		return nil
	}
	return s.shared.Ping(ctx)
}

// engine sets the options that come from the state.
func (s *state) engine(o *switchboard.Options) {
	o.Credentials = s.creds
	o.Store = s.db()
	if s.shared != nil {
		o.StoreKey = s.shared.Key
	}
}

// describe says which store holds credentials, for messages.
func (s *state) describe() string {
	if s.shared != nil {
		return credstore.Describe(s.shared.Credentials)
	}
	if l, ok := s.creds.(*lazyStore); ok {
		if st, err := l.open(); err == nil {
			return credstore.Describe(st)
		}
	}
	return s.creds.Name() + " store"
}

// states are the shared stores a command opened, kept for the rest of the
// command (a panel reopens its engine on the same database) and closed
// when it ends, after its engines.
type states struct {
	mu   sync.Mutex
	open map[config.Store]*switchboard.Store
}

// openState opens cfg's state: with settings.store, its database (once per
// command: later calls reuse it); without, the credential store of
// settings.credentialStore, opened on first use. An error is one line that
// says what to fix.
func (e *env) openState(ctx context.Context, cfg *config.Config) (*state, error) {
	if cfg.Settings.Store == nil {
		return &state{creds: e.credentials(ctx, cfg)}, nil
	}
	if e.states == nil {
		e.states = &states{}
	}
	ss := e.states
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st, ok := ss.open[*cfg.Settings.Store]; ok {
		return &state{shared: st, creds: st.Credentials}, nil
	}
	st, err := switchboard.OpenStore(ctx, cfg, e.lookupEnv)
	if err != nil {
		return nil, err
	}
	if ss.open == nil {
		ss.open = map[config.Store]*switchboard.Store{}
	}
	ss.open[*cfg.Settings.Store] = st
	return &state{shared: st, creds: st.Credentials}, nil
}

// closeStates closes the shared stores the command opened. run calls it
// once the command has returned, and with it closed its engines.
func (e *env) closeStates() error {
	if e.states == nil {
		return nil
	}
	e.states.mu.Lock()
	defer e.states.mu.Unlock()
	var errs []error
	for k, st := range e.states.open {
		errs = append(errs, st.Close())
		delete(e.states.open, k)
	}
	return errors.Join(errs...)
}

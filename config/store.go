package config

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// Store is settings.store: the database that replicas of a team share
// (docs/team.md). Without it, each process keeps its own state: the SQLite
// catalog, the keychain or file credential store and audit.jsonl.
//
// Both fields hold a reference to an environment variable, such as
// ${DATABASE_URL}, never the value: a connection URL carries a password,
// and the key unlocks every stored credential.
type Store struct {
	// Postgres references the PostgreSQL connection URL.
	Postgres string
	// Key references the key that encrypts credentials at rest: 32 random
	// bytes in standard base64 (openssl rand -base64 32).
	Key string
}

// StoreKeySize is the size of settings.store.key, in bytes: an AES-256 key.
const StoreKeySize = 32

// store decodes settings.store. It belongs in the user's own file or one
// named with --config: a project must not move where credentials live.
func (d *decoder) store(v *hujson.Value, path string) *Store {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	if d.src.InProject() {
		d.errorf(v, path, "belongs in your own configuration file, not a project's: a project cannot move where credentials are kept")
		return nil
	}
	s := &Store{}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "postgres":
			s.Postgres, _ = d.envReference(m.value, p, "the PostgreSQL connection URL, such as ${DATABASE_URL}")
		case "key":
			s.Key, _ = d.envReference(m.value, p, "the encryption key, such as ${SWITCHBOARD_STORE_KEY} (make one with: openssl rand -base64 32)")
		default:
			d.unknown(m.value, path, m.key, []string{"postgres", "key"})
		}
	}
	switch {
	case s.Postgres == "":
		d.errorf(v, path, `needs "postgres": a reference to the PostgreSQL connection URL, such as "${DATABASE_URL}"`)
		return nil
	case s.Key == "":
		d.errorf(v, path, `needs "key": a reference to the key that encrypts credentials, such as "${SWITCHBOARD_STORE_KEY}" (make one with: openssl rand -base64 32)`)
		return nil
	}
	return s
}

// envReference decodes a value that must be exactly one ${VAR} reference.
func (d *decoder) envReference(v *hujson.Value, path, what string) (string, bool) {
	str, ok := d.str(v, path)
	if !ok {
		return "", false
	}
	refs, err := parseRefs(str)
	if err != nil || len(refs) != 1 || refs[0].start != 0 || refs[0].end != len(str) || refs[0].secret || refs[0].cmd || refs[0].hasDef {
		if err == nil && len(refs) == 0 && str != "" {
			str = Redacted
		}
		d.errorf(v, path, "must be one ${VAR} reference to %s, not a literal or another kind of reference (the value is not shown)", what)
		return "", false
	}
	return str, true
}

// Resolve returns the connection URL and the key that s refers to. An
// unset variable or a key that is not 32 bytes of base64 is an error
// naming the variable, never its value.
func (s *Store) Resolve(env func(string) (string, bool)) (dsn string, key []byte, err error) {
	get := func(field, ref string) (string, error) {
		name := strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}")
		v, _ := env(name)
		if v == "" {
			return "", fmt.Errorf("settings.store.%s: the variable %s is not set (set it in the environment of switchboard)", field, name)
		}
		return v, nil
	}
	if dsn, err = get("postgres", s.Postgres); err != nil {
		return "", nil, err
	}
	k, err := get("key", s.Key)
	if err != nil {
		return "", nil, err
	}
	key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(k))
	if err != nil || len(key) != StoreKeySize {
		return "", nil, fmt.Errorf("settings.store.key: %s must hold %d random bytes in standard base64 (make one with: openssl rand -base64 32)", s.Key, StoreKeySize)
	}
	return dsn, key, nil
}

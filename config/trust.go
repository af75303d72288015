package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// trustFile is the user-global record of trusted projects, kept in the state
// directory, which no project can write.
type trustFile struct {
	Projects map[string]trustEntry `json:"projects"`
}

type trustEntry struct {
	Hash      string    `json:"hash"`
	TrustedAt time.Time `json:"trustedAt"`
}

// find returns the entry of the project dir, and the key it is recorded
// under: dir itself, or dir as written otherwise where the file system
// ignores case (samePath), so that C:\Work\proj and c:\work\proj share
// their trust.
func (t trustFile) find(dir string) (key string, e trustEntry, ok bool) {
	if e, ok := t.Projects[dir]; ok {
		return dir, e, true
	}
	for k, e := range t.Projects {
		if samePath(k, dir) {
			return k, e, true
		}
	}
	return "", trustEntry{}, false
}

// set records e for the project dir, replacing the entry it had under
// another spelling.
func (t trustFile) set(dir string, e trustEntry) {
	if key, _, ok := t.find(dir); ok {
		delete(t.Projects, key)
	}
	t.Projects[dir] = e
}

func trustPath(d Dirs) string { return filepath.Join(d.StateDir(), "trust.json") }

// readTrust reads the trust record. A missing or unreadable record trusts
// nothing, which is the safe default.
func readTrust(d Dirs) trustFile {
	t := trustFile{Projects: map[string]trustEntry{}}
	data, err := readFile(trustPath(d))
	if err != nil {
		return t
	}
	if json.Unmarshal(data, &t) != nil || t.Projects == nil {
		t.Projects = map[string]trustEntry{}
	}
	return t
}

// ErrNoProject is returned by Trust when there is no project file to trust.
var ErrNoProject = errors.New("no project configuration to trust")

// Trust records the project's current definitions as trusted, so that its
// .mcp.json and .switchboard/config.json count from now on. It returns the
// configuration as loaded before trusting; a later change to the project's
// definitions needs trust again.
func Trust(d Dirs, now time.Time) (*Config, error) {
	c := Load(d)
	if len(c.Project.Files) == 0 {
		return c, fmt.Errorf("%w in %s (hint: a project defines servers in .mcp.json or .switchboard/config.json)", ErrNoProject, d.Project)
	}
	t := readTrust(d)
	t.set(c.Project.Dir, trustEntry{Hash: c.Project.Hash, TrustedAt: now.UTC()})
	return c, writeTrust(d, t)
}

// Revoke forgets the project's trust. It reports whether it was trusted.
func Revoke(d Dirs) (bool, error) {
	d = d.withDefaults()
	t := readTrust(d)
	key, _, ok := t.find(d.Project)
	if !ok {
		return false, nil
	}
	delete(t.Projects, key)
	return true, writeTrust(d, t)
}

// retrust moves trust from the old hash to the current one after we wrote a
// project file ourselves, but only if the project was trusted for exactly
// the old content: our own edit must not bless someone else's.
func retrust(d Dirs, oldHash string, now time.Time) error {
	t := readTrust(d)
	_, e, ok := t.find(d.Project)
	if !ok || e.Hash != oldHash {
		return nil
	}
	c := Load(d)
	t.set(d.Project, trustEntry{Hash: c.Project.Hash, TrustedAt: now.UTC()})
	return writeTrust(d, t)
}

func writeTrust(d Dirs, t trustFile) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := privfile.MkdirAll(d.StateDir()); err != nil {
		return fmt.Errorf("writing trust: %w", err)
	}
	return writeAtomic(trustPath(d), append(data, '\n'), 0o600)
}

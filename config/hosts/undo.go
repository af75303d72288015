package hosts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// Undo: every write setup makes to a host's file (with a journal) is
// recorded, with the backup of the file as it was and a hash of the file as
// written. Undo reverses the last write to a host's file: it puts the
// backup back (or removes the file, if the write created it), byte for
// byte, but only while the file is still exactly as setup left it, so that
// nothing the person or the host changed since is lost.

// A Change is one write setup made to a host's file.
type Change struct {
	Host   string    `json:"host"`
	File   string    `json:"file"`   // the file as named (a symbolic link stays one)
	What   string    `json:"what"`   // "setup" (mounting Switchboard) or "migrate"
	Backup string    `json:"backup"` // the file as it was; "" when the write created it
	SHA256 string    `json:"sha256"` // of the file as written
	Time   time.Time `json:"time"`
}

// maxJournal bounds the changes kept: the oldest go first.
const maxJournal = 100

type journalFile struct {
	Changes []Change `json:"changes"`
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func readJournal(path string) (journalFile, error) {
	var j journalFile
	data, err := privfile.ReadRegular(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return j, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("reading %s: %w (hint: remove it; only setup --undo needs it)", path, err)
	}
	return j, nil
}

func writeJournal(path string, j journalFile) error {
	if err := privfile.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return privfile.WriteAtomic(path, append(data, '\n'), 0o600)
}

// record adds c to the journal at path, or, when replace is an index of
// it, puts c in that change's place (a write that joins it).
func record(path string, c Change, replace int) error {
	j, err := readJournal(path)
	if err != nil {
		return err
	}
	if replace >= 0 && replace < len(j.Changes) {
		j.Changes[replace] = c
		return writeJournal(path, j)
	}
	j.Changes = append(j.Changes, c)
	if n := len(j.Changes); n > maxJournal {
		j.Changes = slices.Clone(j.Changes[n-maxJournal:])
	}
	return writeJournal(path, j)
}

// ErrNothingToUndo reports that the journal holds no write to the host.
var ErrNothingToUndo = errors.New("nothing to undo")

// Undo reverses the last write recorded in the journal at path for host,
// and returns it. It refuses, changing nothing, when the file is no longer
// as that write left it, or the backup is gone.
func Undo(journal, host string) (Change, error) {
	j, err := readJournal(journal)
	if err != nil {
		return Change{}, err
	}
	i := -1
	for k, c := range slices.Backward(j.Changes) {
		if c.Host == host {
			i = k
			break
		}
	}
	if i < 0 {
		return Change{}, fmt.Errorf("%w: setup wrote no file of %s (hint: setup --write and --migrate --write record what they change; a backup may still be beside the file)", ErrNothingToUndo, host)
	}
	c := j.Changes[i]
	if err := c.restore(); err != nil {
		return c, err
	}
	j.Changes = slices.Delete(j.Changes, i, i+1)
	if err := writeJournal(journal, j); err != nil {
		return c, fmt.Errorf("restored %s, but cannot update %s: %w", c.File, journal, err)
	}
	return c, nil
}

// restore puts the file back as it was before c.
func (c Change) restore() error {
	target := c.File
	if t, err := filepath.EvalSymlinks(c.File); err == nil {
		target = t
	}
	now, err := readFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("not restoring %s: it no longer exists (hint: its backup is %s)", c.File, orNone(c.Backup))
	case err != nil:
		return fmt.Errorf("not restoring %s: %w", c.File, unwrapPath(err))
	case sha(now) != c.SHA256:
		return fmt.Errorf("not restoring %s: it changed since setup wrote it on %s, and restoring would lose that (hint: restore it by hand from %s)", c.File, c.Time.Format(time.RFC3339), orNone(c.Backup))
	}
	if c.Backup == "" {
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("removing %s, which setup created: %w", c.File, err)
		}
		return nil
	}
	old, err := readFile(c.Backup)
	if err != nil {
		return fmt.Errorf("not restoring %s: its backup %s: %w", c.File, c.Backup, unwrapPath(err))
	}
	if err := privfile.WriteAtomic(target, old, 0o600); err != nil {
		return err
	}
	got, err := readFile(target)
	if err != nil || !bytes.Equal(got, old) {
		return fmt.Errorf("restored %s, but it reads back otherwise (the backup is %s)", c.File, c.Backup)
	}
	return nil
}

func orNone(backup string) string {
	if backup == "" {
		return "none: setup created the file"
	}
	return backup
}

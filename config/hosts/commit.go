package hosts

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// hostWrite is one write of a host's file, as setup and migrate make them:
// the file as planned, and where the write is recorded.
type hostWrite struct {
	host, title, file string
	what              string // "setup" or "migrate", for the journal
	data              []byte // the file as read
	exists            bool   // false: the write creates it
	journal           string // the journal's path, or "" for none
	continues         bool   // join the journal's last change to the file (MigrateOptions.Continues)
}

// commit replaces the file with out: it refuses a file that changed since
// it was read, backs the file up (or creates its directory), writes
// atomically, reads the result back and checks it with check, and records
// the change in the journal. written is true once the file changed.
func (w hostWrite) commit(out []byte, now time.Time, check func([]byte) error) (written bool, backup string, err error) {
	target, err := w.target()
	if err != nil {
		return false, "", err
	}
	joined, prev := w.joins()
	switch {
	case joined >= 0:
		// The earlier write of this command backed the file up already.
	case !w.exists:
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return false, "", fmt.Errorf("creating %s: %w", filepath.Dir(target), err)
		}
	default:
		if backup, err = w.backup(target, now); err != nil {
			return false, "", err
		}
	}
	kept := cmp.Or(backup, prev.Backup, "no backup: it was new")
	if err := privfile.WriteAtomic(target, out, 0o600); err != nil {
		return false, backup, err
	}
	if err := readBack(target, out, check); err != nil {
		return true, backup, fmt.Errorf("wrote %s, but %v (the file as it was is in %s)", w.file, err, kept)
	}
	if w.journal != "" {
		c := Change{Host: w.host, File: w.file, What: w.what, Backup: backup, SHA256: sha(out), Time: now.UTC()}
		if joined >= 0 {
			c.Backup, c.Time = prev.Backup, prev.Time
		}
		if err := record(w.journal, c, joined); err != nil {
			return true, backup, fmt.Errorf("wrote %s, but cannot record it for --undo: %w (the file as it was is in %s)", w.file, err, kept)
		}
	}
	return true, backup, nil
}

// joins returns the index in the journal of the change this write joins,
// and that change, or -1: with continues, the journal's last change to the
// host's file, when the file is still as that change left it.
func (w hostWrite) joins() (int, Change) {
	if !w.continues || w.journal == "" {
		return -1, Change{}
	}
	j, err := readJournal(w.journal)
	if err != nil {
		return -1, Change{}
	}
	for i, c := range slices.Backward(j.Changes) {
		if c.Host != w.host {
			continue
		}
		if c.File == w.file && c.SHA256 == sha(w.data) {
			return i, c
		}
		break
	}
	return -1, Change{}
}

// target returns the file to replace: a symbolic link (dotfile managers use
// them) is followed, so that the link stays. It refuses a file that
// changed, or appeared, since it was planned: the host may be running.
func (w hostWrite) target() (string, error) {
	target := w.file
	if w.exists {
		if t, err := filepath.EvalSymlinks(w.file); err == nil {
			target = t
		}
	}
	data, err := readFile(target)
	switch {
	case !w.exists && errors.Is(err, fs.ErrNotExist):
		return target, nil
	case err == nil && w.exists && bytes.Equal(data, w.data):
		return target, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("not changing %s: %w", w.file, unwrapPath(err))
	}
	return "", fmt.Errorf("not changing %s: it changed while setup ran (hint: run setup again; if %s is running, its own command may be safer)", w.file, w.title)
}

// backup copies the file as read to FILE.switchboard-backup-<UTC time>,
// with the mode of target, never replacing an earlier backup.
func (w hostWrite) backup(target string, now time.Time) (string, error) {
	st, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", w.file, unwrapPath(err))
	}
	base := w.file + ".switchboard-backup-" + now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		path := base
		if i > 1 {
			path = fmt.Sprintf("%s-%d", base, i)
		}
		err := writeNew(path, w.data, st.Mode().Perm())
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", w.file, err)
		}
		return path, nil
	}
}

// writeNew writes data to path, which must not exist, with mode perm.
func writeNew(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	if err = f.Chmod(perm); err != nil { // whatever the umask
		f.Close()
		return err
	}
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readBack reads the written file again and checks it.
func readBack(target string, want []byte, check func([]byte) error) error {
	got, err := readFile(target)
	if err != nil {
		return fmt.Errorf("it cannot be read back: %v", unwrapPath(err))
	}
	if !bytes.Equal(got, want) {
		return errors.New("it reads back otherwise (another program may have written it)")
	}
	return check(got)
}

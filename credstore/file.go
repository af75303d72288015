package credstore

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File is a Store in a directory: one file of mode 0600 per key, in a
// directory of mode 0700, each written whole to a temporary file and renamed
// over the old one, so a reader sees the old value or the new, never a part.
// File names are the keys in base32, so any key maps to a safe name.
type File struct {
	dir string
}

// NewFile returns a File store in dir, created (0700) on first write.
func NewFile(dir string) *File { return &File{dir: dir} }

// Name implements Store.
func (f *File) Name() string { return "file" }

// Dir returns the store's directory.
func (f *File) Dir() string { return f.dir }

var fileEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

const (
	valueExt = ".cred"
	lockExt  = ".lock"
)

func (f *File) path(key, ext string) string {
	return filepath.Join(f.dir, fileEncoding.EncodeToString([]byte(key))+ext)
}

// Get implements Store.
func (f *File) Get(key string) ([]byte, bool, error) {
	if err := CheckKey(key); err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(f.path(key, valueExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading credential %q: %w", key, err)
	}
	return b, true, nil
}

// Set implements Store.
func (f *File) Set(key string, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := f.ensureDir(); err != nil {
		return err
	}
	if err := writeAtomic(f.dir, filepath.Base(f.path(key, valueExt)), value); err != nil {
		return fmt.Errorf("storing credential %q: %w", key, err)
	}
	return nil
}

// writeAtomic writes data to the file name in dir, of mode 0600: whole to
// a temporary file, then renamed over the old one. dir must exist.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return replaceFile(tmp.Name(), filepath.Join(dir, name))
}

// ensureDir makes the directory 0700, and tightens one that is looser.
func (f *File) ensureDir() error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return fmt.Errorf("creating the credential directory: %w", err)
	}
	info, err := os.Stat(f.dir)
	if err != nil {
		return fmt.Errorf("creating the credential directory: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(f.dir, 0o700); err != nil {
			return fmt.Errorf("the credential directory %s is open to others (%v) and could not be restricted: %w", f.dir, info.Mode().Perm(), err)
		}
	}
	return restrictDir(f.dir)
}

// Delete implements Store.
func (f *File) Delete(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	err := os.Remove(f.path(key, valueExt))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting credential %q: %w", key, err)
	}
	return nil
}

// Keys implements Store.
func (f *File) Keys(prefix string) ([]string, error) {
	ents, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing credentials: %w", err)
	}
	var keys []string
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), valueExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		b, err := fileEncoding.DecodeString(name)
		if err != nil || CheckKey(string(b)) != nil {
			continue // not ours
		}
		if key := string(b); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// lockPoll is how often Lock tries again while another process holds the
// lock. Holders keep it for one token request at most.
const lockPoll = 20 * time.Millisecond

// Lock implements Store with an advisory lock on a file beside the value's.
func (f *File) Lock(ctx context.Context, key string) (func(), error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := f.ensureDir(); err != nil {
		return nil, err
	}
	unlock, err := lockPath(ctx, f.path(key, lockExt))
	if err != nil {
		return nil, fmt.Errorf("locking credential %q: %w", key, err)
	}
	return unlock, nil
}

// lockPath takes an exclusive advisory lock on the file at path, created
// if need be, waiting while another holder has it until ctx ends.
func lockPath(ctx context.Context, path string) (func(), error) {
	lf, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(lf)
		if err != nil {
			lf.Close()
			return nil, err
		}
		if ok {
			return func() { unlock(lf); lf.Close() }, nil
		}
		select {
		case <-ctx.Done():
			lf.Close()
			return nil, fmt.Errorf("another process holds it: %w", context.Cause(ctx))
		case <-time.After(lockPoll):
		}
	}
}

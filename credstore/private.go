package credstore

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// replaceFile moves a value's temporary file over the value, atomically:
// rename on Unix, MoveFileEx on Windows, tried again while a reader has
// the old value open.
func replaceFile(from, to string) error { return privfile.Replace(from, to) }

// restrictDir closes the store's directory to everyone but its owner where
// mode bits do not (Windows: an owner-only access-control list, which the
// values inherit). On Unix the directory's mode 0700 does it.
func restrictDir(dir string) error {
	if err := privfile.Restrict(dir); err != nil {
		return fmt.Errorf("the credential directory %s could not be restricted to its owner: %w", dir, err)
	}
	return nil
}

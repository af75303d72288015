package credstore

import (
	"os"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// tryLock takes an exclusive lock on f without waiting (LockFileEx); it
// reports false when another open file holds it, in this process or
// another.
func tryLock(f *os.File) (bool, error) { return privfile.TryLock(f) }

func unlock(f *os.File) { _ = privfile.Unlock(f) }

// Package samefile tells whether two paths lead to one file, whatever
// links, case or spelling lead there: the same device and inode on Unix,
// the same volume and file index on Windows (os.SameFile).
package samefile

import "os"

// Is reports whether the paths a and b lead to the same existing file. A
// path that cannot be examined (it does not exist, or a directory on the
// way cannot be searched) leads to none.
func Is(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

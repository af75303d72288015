//go:build !linux

package exepages

import "errors"

func release() (int64, error) { return 0, nil }

func residentOf(int) (int64, int64, error) {
	return 0, 0, errors.New("resident pages of an executable: only on Linux")
}

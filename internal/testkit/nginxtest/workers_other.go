//go:build !linux

package nginxtest

import "errors"

func workers(int) ([]int, error) {
	return nil, errors.New("nginxtest: reloading needs /proc (Linux)")
}

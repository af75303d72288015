//go:build !(linux || darwin)

package main

import (
	"errors"
	"os"
)

// noEcho cannot turn off a terminal's echo on this system: the value must
// come from standard input.
func noEcho(*os.File) (func(), error) {
	return nil, errors.New("this system's terminal cannot hide what is typed here")
}

//go:build !((dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd)

package credstore

// sessionBus is nil: the keychains of other systems need no bus.
func sessionBus() error { return nil }

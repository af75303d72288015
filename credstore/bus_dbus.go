//go:build (dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd

package credstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// sessionBus returns why the D-Bus session bus, where a Secret Service
// answers, cannot be found, or nil. go-keyring's D-Bus library, finding no
// address, runs dbus-launch, which starts a bus daemon that outlives the
// process: a probe must never do that, so the keychain is used only where
// the bus is known, from $DBUS_SESSION_BUS_ADDRESS or the user's runtime
// directory (/run/user/UID/bus, where systemd puts it).
func sessionBus() error {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return nil
	}
	run := filepath.Join("/run/user", fmt.Sprint(os.Getuid()))
	for _, name := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(filepath.Join(run, name)); err == nil {
			return nil
		}
	}
	return errors.New("no D-Bus session bus, where a Secret Service such as GNOME Keyring answers ($DBUS_SESSION_BUS_ADDRESS is unset and " + run + "/bus does not exist)")
}

package main

import (
	"path/filepath"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// credentialStore returns the store of OAuth tokens and client
// registrations: every command that uses one gets it here, so the choice
// of store is made in one place. Today it is a file store in the state
// directory (0600 files in a 0700 directory).
func (e *env) credentialStore(d config.Dirs) credstore.Store {
	return credstore.NewFile(filepath.Join(d.StateDir(), "credentials"))
}

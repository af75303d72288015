package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Offline (settings.offline, or --offline) keeps Switchboard off the
// network: servers reached over it, and stdio servers started by a package
// runner that may download what it runs, are not started; search and
// describe answer from the catalog. Server.Offline says why a server is
// refused.

// GoOffline makes the configuration offline, as settings.offline does.
func (c *Config) GoOffline() {
	c.Settings.Offline = true
	for _, s := range c.Servers {
		s.Offline = s.offlineRefusal()
	}
}

// offlineRefusal says why the server cannot be started offline, or "".
func (s *Server) offlineRefusal() string {
	if s.Type == TransportInProcess || s.Type == TransportSocket {
		return "" // in the host's own binary, or a local socket
	}
	if s.Type != TransportStdio {
		return fmt.Sprintf("it is reached over the network (%s)", s.Type)
	}
	cmd := strings.ToLower(filepath.Base(strings.ReplaceAll(s.Command, `\`, "/")))
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		cmd = strings.TrimSuffix(cmd, ext)
	}
	args := s.Args
	has := func(flags ...string) bool {
		for _, a := range args {
			name, _, _ := strings.Cut(a, "=")
			if slices.Contains(flags, name) {
				return true
			}
		}
		return false
	}
	first := func(words ...string) bool { return len(args) > 0 && slices.Contains(words, args[0]) }
	switch {
	case cmd == "npx" && !has("--offline", "--prefer-offline"):
		return "npx may download the package it runs (hint: add \"--prefer-offline\" to its args to run the copy in npm's cache)"
	case cmd == "uvx" && !has("--offline"):
		return "uvx may download the package it runs (hint: add \"--offline\" to its args to run the copy in uv's cache)"
	case cmd == "uv" && first("tool", "run") && !has("--offline"):
		return "uv may download what it runs (hint: add \"--offline\" to its args)"
	case cmd == "pipx" && first("run"):
		return "pipx run may download the package it runs"
	case cmd == "bunx", cmd == "bun" && first("x"):
		return "bunx may download the package it runs"
	case (cmd == "pnpm" || cmd == "yarn") && first("dlx"):
		return cmd + " dlx downloads the package it runs"
	case (cmd == "docker" || cmd == "podman") && first("run") && !pullNever(args):
		return cmd + " run pulls an image it does not have (hint: add \"--pull=never\" to its args)"
	}
	return ""
}

// pullNever reports whether docker run's arguments say --pull=never.
func pullNever(args []string) bool {
	for i, a := range args {
		if a == "--pull=never" || a == "--pull" && i+1 < len(args) && args[i+1] == "never" {
			return true
		}
	}
	return false
}

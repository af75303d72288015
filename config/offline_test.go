package config

import (
	"strings"
	"testing"
)

func TestOfflineRefusal(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want string // in the refusal; "" for none
	}{
		{Server{Type: TransportHTTP, URL: "https://x"}, "over the network (http)"},
		{Server{Type: TransportSSE, URL: "https://x"}, "over the network (sse)"},
		{Server{Type: TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}}, "npx may download"},
		{Server{Type: TransportStdio, Command: "/usr/bin/npx", Args: []string{"--prefer-offline", "-y", "pkg"}}, ""},
		{Server{Type: TransportStdio, Command: `C:\nodejs\npx.cmd`, Args: []string{"--offline", "pkg"}}, ""},
		{Server{Type: TransportStdio, Command: "uvx", Args: []string{"mcp-server-git"}}, "uvx may download"},
		{Server{Type: TransportStdio, Command: "uvx", Args: []string{"--offline", "mcp-server-git"}}, ""},
		{Server{Type: TransportStdio, Command: "pipx", Args: []string{"run", "x"}}, "pipx run"},
		{Server{Type: TransportStdio, Command: "pipx", Args: []string{"list"}}, ""},
		{Server{Type: TransportStdio, Command: "bunx", Args: []string{"x"}}, "bunx"},
		{Server{Type: TransportStdio, Command: "bun", Args: []string{"x", "pkg"}}, "bunx"},
		{Server{Type: TransportStdio, Command: "pnpm", Args: []string{"dlx", "pkg"}}, "pnpm dlx"},
		{Server{Type: TransportStdio, Command: "docker", Args: []string{"run", "-i", "--rm", "ghcr.io/x"}}, "docker run pulls"},
		{Server{Type: TransportStdio, Command: "docker", Args: []string{"run", "--pull=never", "-i", "ghcr.io/x"}}, ""},
		{Server{Type: TransportStdio, Command: "podman", Args: []string{"run", "--pull", "never", "x"}}, ""},
		{Server{Type: TransportStdio, Command: "node", Args: []string{"server.js"}}, ""},
		{Server{Type: TransportStdio, Command: "npx-wrapper"}, ""},
		{Server{Type: TransportInProcess, Name: "packaged"}, ""},
	} {
		got := tc.s.offlineRefusal()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want %q", tc.s.Command, tc.s.Args, got, tc.want)
		}
	}
}

func TestOfflineSetting(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `{"settings": {"offline": true}, "mcpServers": {"h": {"url": "https://example.com/mcp"}, "n": {"command": "node"}}}`)
	c := Load(d)
	noErrors(t, c)
	h, _ := c.Server("h")
	n, _ := c.Server("n")
	if h.Offline == "" || n.Offline != "" {
		t.Errorf("offline: h %q, n %q; want h refused, n not", h.Offline, n.Offline)
	}
	d = newDirs(t)
	writeFile(t, pathsOf(d).user, `{"mcpServers": {"h": {"url": "https://example.com/mcp"}}}`)
	c = Load(d)
	if h, _ := c.Server("h"); h.Offline != "" {
		t.Errorf("online, h refused: %q", h.Offline)
	}
	c.GoOffline()
	if h, _ := c.Server("h"); h.Offline == "" || !c.Settings.Offline {
		t.Errorf("GoOffline did not refuse h")
	}
}

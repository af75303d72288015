//go:build !windows

package gateway

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestOfflineMode: with settings.offline, a stdio server started by a
// package runner that may download (here a script named npx that starts
// the fixture and counts its starts) and an HTTP server (which counts its
// requests) are never started or reached; search, describe and the
// server's listing answer from the catalog, and a call says why not.
func TestOfflineMode(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	path, args, env := testserver.Command(testserver.Good)
	script := "#!/bin/sh\necho started >> " + starts + "\nexec " + path + " " + strings.Join(args, " ") + "\n"
	npx := filepath.Join(dir, "npx")
	if err := os.WriteFile(npx, []byte(strings.ReplaceAll(script, "^$", "'^$'")), 0o700); err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer remote.Close()
	servers := map[string]def{"pkg": {"command": npx, "args": []string{"-y", "some-package"}, "env": env}}

	online := engineIn(t, home, servers, nil, nil)
	if res, err := online.Index(t.Context(), nil, nil); err != nil || res[0].Error != "" {
		t.Fatalf("indexing online: %v %+v", err, res)
	}
	online.Close()
	count := func() int {
		data, _ := os.ReadFile(starts)
		return strings.Count(string(data), "\n")
	}
	if count() != 1 {
		t.Fatalf("the server started %d times online, want 1", count())
	}

	servers["remote"] = def{"url": remote.URL + "/mcp"}
	e := engineIn(t, home, servers, map[string]any{"offline": true}, nil)
	r := must(t, e, `{"search": "echo"}`)
	wantText(t, r, "pkg_echo", `not searched: "remote"`, "Switchboard is offline", "over the network (http)")
	wantText(t, must(t, e, `{"describe": "echo", "server": "pkg"}`), `tool "echo" on "pkg"`, "input schema:")
	wantText(t, must(t, e, `{"server": "pkg"}`), "echo — Echoes text.")
	r = handle(t, e, `{"tool": "echo", "server": "pkg", "args": {"text": "hi"}}`)
	if !r.IsError {
		t.Fatalf("an offline call went through: %s", r.Text)
	}
	wantText(t, r, "Switchboard is offline", "npx may download the package it runs", "--prefer-offline")
	r = handle(t, e, `{"server": "remote"}`)
	if !r.IsError || !strings.Contains(r.Text, "over the network (http)") {
		t.Errorf("listing a remote server offline: %s", r.Text)
	}
	if count() != 1 || hits.Load() != 0 {
		t.Errorf("offline: the package runner started %d more times, the HTTP server got %d requests; want none", count()-1, hits.Load())
	}
}

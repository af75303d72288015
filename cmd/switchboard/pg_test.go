package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestPostgresScripts runs testdata/pg/*.txtar against the private
// PostgreSQL server of pgtest: $DATABASE_URL names a fresh database,
// $SWITCHBOARD_STORE_KEY is a random key and $OTHER_KEY another one.
func TestPostgresScripts(t *testing.T) {
	dsn := pgtest.DSN(t)
	key := func() string {
		b := make([]byte, 32)
		rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	fixture, _, _ := testserver.Command(testserver.Good)
	testscript.Run(t, scriptParams("testdata/pg", map[string]string{
		"FIXTURE": fixture, "DATABASE_URL": dsn, "SWITCHBOARD_STORE_KEY": key(), "OTHER_KEY": key(),
	}))
}

// TestServeSharedSecret: a secret stored by one process (secret set) with
// settings.store reaches a stdio server that switchboard serve, another
// process with nothing in its state directory, starts: through the
// database alone; and so does serve --http, a third.
func TestServeSharedSecret(t *testing.T) {
	dsn := pgtest.DSN(t)
	key := make([]byte, 32)
	rand.Read(key)
	vars := []string{"DATABASE_URL=" + dsn, "SWITCHBOARD_STORE_KEY=" + base64.StdEncoding.EncodeToString(key)}
	home := t.TempDir()
	path, args, env := testserver.Command(testserver.EnvReport)
	env["GH_TOKEN"] = "${secret:GH_TOKEN}"
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	writeJSONFile(t, filepath.Join(home, ".config", "switchboard", "config.json"), map[string]any{
		"settings":   map[string]any{"store": map[string]any{"postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}"}},
		"mcpServers": map[string]any{"env": map[string]any{"command": path, "args": args, "env": env}},
	})
	const value = "pg-serve-canary-0b7d"
	set := switchboardCmd(t, home, "secret", "set", "GH_TOKEN")
	set.Env = append(set.Env, vars...)
	set.Stdin = strings.NewReader(value + "\n")
	if out, err := set.CombinedOutput(); err != nil || !strings.Contains(string(out), "stored secret GH_TOKEN in the PostgreSQL store") {
		t.Fatalf("secret set: %v\n%s", err, out)
	}

	// The database holds it encrypted: no row holds the value.
	db, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM switchboard_credentials WHERE key = 'secret/GH_TOKEN' AND position($1::bytea in value) = 0`, []byte(value)).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("the secret's row, without the value in it: %d rows, %v; want 1", rows, err)
	}
	var holding int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM switchboard_credentials WHERE position($1::bytea in value) > 0`, []byte(value)).Scan(&holding); err != nil || holding != 0 {
		t.Errorf("%d rows hold the value (%v), want none", holding, err)
	}

	cmd := switchboardCmd(t, home, "serve")
	cmd.Env = append(cmd.Env, vars...)
	var log bytes.Buffer
	cmd.Stderr = &log
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log.Bytes())
	}
	got, isErr := callText(t, cs, "mcp", map[string]any{"server": "env", "tool": "env", "args": map[string]any{"name": "GH_TOKEN"}})
	if want := testserver.EnvAnswer("GH_TOKEN", value); isErr || !strings.Contains(got, want) {
		t.Errorf("the stdio server's environment: got %q, want it to say %q", got, want)
	}
	cs.Close()
	if bytes.Contains(log.Bytes(), []byte(value)) {
		t.Errorf("serve's log holds the secret:\n%s", log.Bytes())
	}

	// serve --http, a replica of its own, reads it too.
	hcmd := switchboardCmd(t, home, "serve", "--http", "127.0.0.1:0")
	hcmd.Env = append(hcmd.Env, vars...)
	endpoint := startHTTP(t, hcmd)
	hs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, isErr = callText(t, hs, "mcp", map[string]any{"server": "env", "tool": "env", "args": map[string]any{"name": "GH_TOKEN"}})
	if want := testserver.EnvAnswer("GH_TOKEN", value); isErr || !strings.Contains(got, want) {
		t.Errorf("over HTTP, the stdio server's environment: got %q, want it to say %q", got, want)
	}
	hs.Close()
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "switchboard", "credentials")); err == nil {
		t.Error("a file credential store was made beside settings.store")
	}
}

// startHTTP starts cmd, a switchboard serve --http, and returns the
// endpoint it says it serves; it is stopped with SIGTERM when the test
// ends, its stderr logged.
func startHTTP(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
	})
	lines := bufio.NewScanner(stderr)
	var endpoint string
	for endpoint == "" && lines.Scan() {
		t.Log(lines.Text())
		_, endpoint, _ = strings.Cut(lines.Text(), "switchboard: serving ")
	}
	go func() {
		for lines.Scan() {
			t.Log(lines.Text())
		}
		cmd.Wait()
		close(done)
	}()
	if endpoint == "" {
		t.Fatal("switchboard serve --http did not say where it serves")
	}
	return endpoint
}

// Package registrytest runs the official MCP registry server
// (github.com/modelcontextprotocol/registry, cmd/registry) for a test: built
// once per machine and version with go install into a cache directory,
// started on a free 127.0.0.1 port against a fresh database of the private
// PostgreSQL server (pgtest), seeded with the test's server.json entries
// through its seed file, and stopped when the test ends.
//
// Versions (measured 2026-12-06): v1.8.9 needs danielgtaylor/huma/v2
// v2.40.0, which the module proxy refuses (403); v1.5.0, v1.7.9, v1.8.1,
// v1.8.3, v1.8.5, v1.8.7 and v1.8.8 build. Version is the newest that builds. The
// server serves the same API under /v0 and /v0.1; Switchboard asks v0.1.
//
// Without the go tool or the network to build it, or without PostgreSQL, a
// test skips, unless SWITCHBOARD_REQUIRE_REGISTRY=1, where it fails.
package registrytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// Version is the registry release the tests run.
const Version = "v1.8.8"

// Require is the variable that makes a registry that cannot be built a
// failure rather than a skip.
const Require = "SWITCHBOARD_REQUIRE_REGISTRY"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns the path of the registry server, building it on the first
// call of the process (and reusing a build of the same version left by an
// earlier run in the cache directory).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		if os.Getenv(Require) == "1" {
			t.Fatalf("building the MCP registry server %s: %v", Version, buildErr)
		}
		t.Skipf("skipped: building the MCP registry server %s: %v (set %s=1 to fail instead)", Version, buildErr, Require)
	}
	return buildPath
}

// cacheDir is where builds are kept: $SWITCHBOARD_TEST_CACHE, else the
// user's cache directory, else the temporary directory.
func cacheDir() string {
	if d := os.Getenv("SWITCHBOARD_TEST_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "switchboard-test")
	}
	return filepath.Join(os.TempDir(), "switchboard-test")
}

func build() (string, error) {
	dir := filepath.Join(cacheDir(), "mcp-registry-"+Version)
	bin := filepath.Join(dir, "registry")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go tool on PATH: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-*")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", err
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), ".build-*"); err != nil {
			return "", err
		}
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "install", "github.com/modelcontextprotocol/registry/cmd/registry@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install: %v: %s", err, tail(out))
	}
	// Another test binary may have built it at the same time: the rename
	// of a whole directory is atomic, and the loser uses the winner's.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr == nil {
			return bin, nil
		}
		return "", err
	}
	return bin, nil
}

// Start runs a registry seeded with servers (server.json entries, any JSON
// value) and returns its base URL. The server and its database go when the
// test ends.
func Start(t testing.TB, servers ...any) string {
	t.Helper()
	bin := Binary(t)
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	data, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seed, data, 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"MCP_REGISTRY_DATABASE_URL="+dsn,
		"MCP_REGISTRY_SERVER_ADDRESS="+addr,
		"MCP_REGISTRY_SEED_FROM="+seed,
		"MCP_REGISTRY_ENABLE_REGISTRY_VALIDATION=false",
		"MCP_REGISTRY_ENABLE_ANONYMOUS_AUTH=false",
		"MCP_REGISTRY_JWT_PRIVATE_KEY=bb2c6b424005acd5df47a9e2c87f446def86dd740c888ea3efb825b23f7ef47c",
	)
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the registry: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
	})
	base := "http://" + addr
	if err := waitHealthy(base, exited); err != nil {
		out, _ := os.ReadFile(logFile.Name())
		t.Fatalf("the registry did not start: %v\n%s", err, tail(out))
	}
	return base
}

// waitHealthy waits until the registry answers its health check and lists
// servers (the seed is imported before it listens), or exits.
func waitHealthy(base string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v0.1/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("health: %s", resp.Status)
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("it exited (last: %v)", last)
		case <-ctx.Done():
			return fmt.Errorf("no answer within 2m (last: %v)", last)
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

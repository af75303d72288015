//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// httpServe is a running switchboard serve --http.
type httpServe struct {
	endpoint string        // http://ADDR/mcp
	lines    chan string   // its stderr, a line at a time
	exited   chan struct{} // closed when it has exited
	code     int           // its exit code, once exited
	cmd      interface{ Signal(os.Signal) error }
}

// startServeHTTP starts the real binary serving HTTP on a free loopback
// port with args, and returns once it says where it serves.
func startServeHTTP(t *testing.T, home string, args ...string) *httpServe {
	t.Helper()
	return startServeHTTPEnv(t, home, nil, args...)
}

// startServeHTTPEnv is startServeHTTP with env added to its environment.
func startServeHTTPEnv(t *testing.T, home string, env []string, args ...string) *httpServe {
	t.Helper()
	cmd := switchboardCmd(t, home, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpServe{lines: make(chan string, 1000), exited: make(chan struct{}), cmd: cmd.Process}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(sc.Text())
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		s.code = cmd.ProcessState.ExitCode()
		close(s.exited)
		close(s.lines)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			cmd.Process.Kill()
			<-s.exited
		}
	})
	s.endpoint = strings.TrimPrefix(s.waitLine(t, "switchboard: serving "), "switchboard: serving ")
	return s
}

// waitLine waits for a line of stderr that contains want, and returns it.
// The bound turns a serve that never says it into a failure; it measures
// nothing.
func (s *httpServe) waitLine(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("switchboard serve exited without writing %q", want)
			}
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("switchboard serve did not write %q", want)
		}
	}
}

// waitExit waits for the process to exit and returns its code.
func (s *httpServe) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case <-s.exited:
		return s.code
	case <-time.After(2 * time.Minute):
		t.Fatal("switchboard serve did not exit")
		return 0
	}
}

// get returns the status and body of a GET of path on the server.
func (s *httpServe) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(s.endpoint, "/mcp") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// gateCall starts a call of the fixture's gate tool through cs, and
// returns once the fixture has reported it is waiting at the gate, with
// where the call's result will come.
func gateCall(t *testing.T, cs *mcp.ClientSession, progressed chan struct{}, fifo string) chan *mcp.CallToolResult {
	t.Helper()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gate", Arguments: map[string]any{"fifo": fifo}, Meta: mcp.Meta{"progressToken": "gate"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "client error: " + err.Error()}}}
		}
		done <- res
	}()
	select {
	case <-progressed:
	case res := <-done:
		t.Fatalf("the gate call ended before it reached the gate: %q", textOf(res))
	case <-time.After(2 * time.Minute):
		t.Fatal("the gate call never reached the fixture")
	}
	return done
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// drainClient connects a client to serve, its progress notifications
// signalled on the channel it returns.
func drainClient(t *testing.T, endpoint string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	progressed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		}})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, progressed
}

// TestServeDrainsOnSIGTERM: SIGTERM makes serve --http drain. /readyz turns
// 503 at once and a new session is refused with 503, before anything is
// done for it, while the call in flight goes on and completes; then the
// process exits 0 and leaves no child behind.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Gated)}, map[string]any{"toolPrefix": "none"})
	s := startServeHTTP(t, home, "--drain", "5m")
	if code, body := s.get(t, "/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/readyz before the signal: %d %q, want 200 ready", code, body)
	}
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	cs, progressed := drainClient(t, s.endpoint)
	done := gateCall(t, cs, progressed, fifo)

	if err := s.cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLine(t, "draining: taking no new requests")
	if code, body := s.get(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
		t.Errorf("/readyz while draining: %d %q, want 503 draining", code, body)
	}
	req, _ := http.NewRequest("POST", s.endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") || !resp.Close {
		t.Errorf("a new session while draining: %d %q (connection closed: %v), want 503 saying it is shutting down, and the connection closed", resp.StatusCode, body, resp.Close)
	}

	if err := os.WriteFile(fifo, nil, 0o600); err != nil { // opens the gate
		t.Fatal(err)
	}
	if res := <-done; res.IsError || textOf(res) != "through the gate" {
		t.Errorf("the call in flight during the drain: %q (isError %v), want it completed", textOf(res), res.IsError)
	}
	if code := s.waitExit(t); code != 0 {
		t.Errorf("exit code %d after the drain, want 0", code)
	}
}

// TestServeDrainCancelsPastTheBound: a call still running when the drain's
// bound runs out is cancelled, and its client told why; the process still
// exits 0 and leaves no child behind.
func TestServeDrainCancelsPastTheBound(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Gated)}, map[string]any{"toolPrefix": "none"})
	s := startServeHTTP(t, home, "--drain", "1s")
	fifo := filepath.Join(t.TempDir(), "gate") // never opened: the call waits
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	cs, progressed := drainClient(t, s.endpoint)
	done := gateCall(t, cs, progressed, fifo)
	if err := s.cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := <-done
	for _, want := range []string{"switchboard is shutting down", "did not finish within the 1s", "call the tool again"} {
		if !res.IsError || !strings.Contains(textOf(res), want) {
			t.Errorf("the call past the bound: %q (isError %v), want an error saying %q", textOf(res), res.IsError, want)
		}
	}
	if code := s.waitExit(t); code != 0 {
		t.Errorf("exit code %d after the drain, want 0", code)
	}
}

// TestServeReadyWithStore: with settings.store, serve registers the
// replica in the store's registry at the URL it advertises, /readyz
// answers 503 naming the store while the store refuses connections and
// 200 again once it takes them, and a drained replica leaves the registry.
func TestServeReadyWithStore(t *testing.T) {
	dsn := pgtest.DSN(t) // starts the shared server before the leak check: it outlives the test
	admin := pgtest.DB(t)
	mcptest.CheckNoLeaks(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Good)},
		map[string]any{"store": map[string]any{"postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}"}})
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	s := startServeHTTPEnv(t, home, []string{"DATABASE_URL=" + dsn, "SWITCHBOARD_STORE_KEY=" + key, "SWITCHBOARD_ADVERTISE_URL="}, "--advertise", "http://127.0.0.1:1")
	if code, body := s.get(t, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the store up: %d %q, want 200", code, body)
	}
	var id, adv string
	store, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.QueryRowContext(t.Context(), `SELECT id, url FROM switchboard_replicas`).Scan(&id, &adv); err != nil || adv != "http://127.0.0.1:1" {
		t.Errorf("the registry holds %q at %q (%v), want this replica at its --advertise URL", id, adv, err)
	}
	store.Close()

	block := func(allow bool) {
		t.Helper()
		if _, err := admin.ExecContext(t.Context(), fmt.Sprintf(`ALTER DATABASE %s WITH ALLOW_CONNECTIONS %v`, dbName, allow)); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := admin.ExecContext(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, dbName); err != nil {
				t.Fatal(err)
			}
		}
	}
	block(false)
	code, body := s.get(t, "/readyz")
	block(true)
	// /readyz says only that something is unreachable: whoever reaches it
	// learns nothing of the store (its host, user, database); the log
	// says what.
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") || strings.Contains(body, dbName) || strings.Contains(body, "127.0.0.1") || strings.Contains(body, "postgres") {
		t.Errorf("/readyz with the store refusing connections: %d %q, want 503 without the store's details", code, body)
	}
	if line := s.waitLine(t, `msg="not ready"`); !strings.Contains(line, "the shared store (PostgreSQL) is unreachable") || !strings.Contains(line, dbName) {
		t.Errorf("serve logged %q when not ready; want the store's error", line)
	}
	if code, body := s.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the store back: %d %q, want 200", code, body)
	}
	if err := s.cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.waitExit(t); code != 0 {
		t.Errorf("exit code %d after the drain, want 0", code)
	}
	store, err = pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var n int
	if err := store.QueryRowContext(t.Context(), `SELECT count(*) FROM switchboard_replicas`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d replicas registered after the only one stopped (%v), want none", n, err)
	}
}

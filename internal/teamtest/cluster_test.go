package teamtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/nginxtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// Bounds for a replica to start and to stop; generous, for a busy 2-core
// machine. They bound waits, they are not asserted on.
const (
	readyBound = 60 * time.Second
	stopBound  = 20 * time.Second
)

// cluster is three replicas of `switchboard serve --http` sharing one
// configuration, each with its own home, state and cache directories.
type cluster struct {
	t        *testing.T
	bin      string
	config   string   // the shared configuration file
	env      []string // added to every replica's and CLI's environment
	replicas []*replica
}

// replica is one `serve --http` on a fixed loopback port, so that a
// replacement listens where nginx expects it.
type replica struct {
	name      string
	port      int
	home      string
	stateless bool

	mu  sync.Mutex // guards the fields below
	cmd *exec.Cmd
	// done is closed when cmd has been waited for; err is its exit.
	done chan struct{}
	err  error
	out  *nginxtest.Tail
}

func (r *replica) url(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(r.port) + path
}

// newCluster writes the shared configuration (servers; settings merged
// with the audit trail's payloads, so that the audit test can tell calls
// apart) and prepares n replicas; start them with startAll.
func newCluster(t *testing.T, n int, servers map[string]any, settings map[string]any, env []string) *cluster {
	t.Helper()
	bin, err := switchboardBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc := map[string]any{"mcpServers": servers, "settings": settings}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bin: bin, config: config, env: env}
	for i := range n {
		r := &replica{name: "r" + strconv.Itoa(i+1), port: nginxtest.FreePort(t), home: filepath.Join(dir, "r"+strconv.Itoa(i+1))}
		c.replicas = append(c.replicas, r)
	}
	t.Cleanup(c.stopAll)
	return c
}

// fixtureServer is the configuration of the fixture server (go-sdk, over
// stdio): each replica starts its own. Its environment carries the leak
// checker's mark, which switchboard would not pass on.
func fixtureServer() map[string]any {
	path, args, env := testserver.Command(testserver.Good)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	return map[string]any{"command": path, "args": args, "env": env}
}

// dirEnv is the environment of a switchboard process whose home is home:
// its own configuration, state and cache directories, and temporary files.
func dirEnv(home string) ([]string, error) {
	for _, d := range []string{"config", "state", "cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			return nil, err
		}
	}
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"TMPDIR="+filepath.Join(home, "tmp"), "SWITCHBOARD_CONFIG=", "BROWSER=", "GORACE=atexit_sleep_ms=0"), nil
}

// start starts r and waits until it is ready.
func (c *cluster) start(r *replica) {
	c.t.Helper()
	if err := c.launch(r); err != nil {
		c.t.Fatal(err)
	}
}

// startAll starts every replica, in parallel, and waits until each is
// ready.
func (c *cluster) startAll() {
	c.t.Helper()
	errs := make([]error, len(c.replicas))
	var wg sync.WaitGroup
	for i, r := range c.replicas {
		wg.Go(func() { errs[i] = c.launch(r) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.t.Fatal(err)
	}
}

// launch starts r and waits until it is ready.
func (c *cluster) launch(r *replica) error {
	args := []string{"serve", "--config", c.config, "--http", "127.0.0.1:" + strconv.Itoa(r.port), "--log-level", "warn"}
	if r.stateless {
		args = append(args, "--stateless")
	}
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return err
	}
	env, err := dirEnv(r.home)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = r.home
	cmd.Env = append(env, c.env...)
	out := &nginxtest.Tail{Max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting replica %s: %w", r.name, err)
	}
	done := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.done, r.err, r.out = cmd, done, nil, out
	r.mu.Unlock()
	go func() {
		err := cmd.Wait()
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
		close(done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), readyBound)
	defer cancel()
	if err := r.waitReady(ctx, done); err != nil {
		return fmt.Errorf("replica %s on port %d is not ready: %w\nits output:\n%s", r.name, r.port, err, out)
	}
	return nil
}

// waitReady polls /readyz until it answers 200, the process exits, or ctx
// ends. A replica without /readyz (404) is asked /healthz instead.
func (r *replica) waitReady(ctx context.Context, done <-chan struct{}) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	path := "/readyz"
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url(path), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK:
				return nil
			case resp.StatusCode == http.StatusNotFound && path == "/readyz":
				path = "/healthz"
			default:
				last = fmt.Sprintf("GET %s: %s %s", path, resp.Status, strings.TrimSpace(string(body)))
			}
		} else {
			last = err.Error()
		}
		select {
		case <-done:
			return fmt.Errorf("it exited: %v", r.exitErr())
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %s", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

func (r *replica) exitErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// signal sends sig to r and waits, up to stopBound, for it to exit; it
// returns the exit's error (nil for status 0).
func (r *replica) signal(sig syscall.Signal) (error, bool) {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return nil, true
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return r.exitErr(), true
	case <-time.After(stopBound):
		_ = cmd.Process.Kill()
		<-done
		return r.exitErr(), false
	}
}

// stopAll stops every replica (SIGTERM, then SIGKILL after stopBound).
func (c *cluster) stopAll() {
	for _, r := range c.replicas {
		r.mu.Lock()
		running := r.cmd != nil && r.done != nil
		r.mu.Unlock()
		if !running {
			continue
		}
		select {
		case <-r.done:
			continue
		default:
		}
		if _, ok := r.signal(syscall.SIGTERM); !ok {
			c.t.Errorf("replica %s did not stop within %v of SIGTERM; killed\nits output:\n%s", r.name, stopBound, r.out)
		}
	}
}

// restart stops r with SIGTERM and starts its replacement (stateless or
// not) on the same port; it fails the test if r did not exit cleanly.
func (c *cluster) restart(r *replica, stateless bool) {
	c.t.Helper()
	if err, ok := r.signal(syscall.SIGTERM); !ok || err != nil {
		c.t.Errorf("replica %s, stopped with SIGTERM: exit %v (within %v: %v)\nits output:\n%s", r.name, err, stopBound, ok, r.out)
	}
	r.stateless = stateless
	c.start(r)
}

// counters reads r's /metrics: calls and error results per server.
func (r *replica) counters() (calls, errs map[string]int64, err error) { return r.countersAs("") }

// countersAs is counters with an access token (with settings.identity,
// /metrics is the admin group's).
func (r *replica) countersAs(token string) (calls, errs map[string]int64, err error) {
	req, err := http.NewRequest(http.MethodGet, r.url("/metrics"), nil)
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	calls, errs = map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]int64
		switch {
		case strings.HasPrefix(line, "switchboard_calls_total{"):
			into = calls
		case strings.HasPrefix(line, "switchboard_call_errors_total{"):
			into = errs
		default:
			continue
		}
		_, labels, _ := strings.Cut(line, "{")
		labels, value, _ := strings.Cut(labels, "} ")
		_, server, _ := strings.Cut(labels, `server="`)
		server, _, _ = strings.Cut(server, `"`)
		n, _ := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		into[server] += n
	}
	return calls, errs, sc.Err()
}

// run runs the switchboard CLI with args and the shared configuration, in
// home's directories, and returns its stdout, stderr and error.
func (c *cluster) run(home string, extraEnv []string, args ...string) (string, string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(args, "--config", c.config)...)
	if err := os.MkdirAll(home, 0o700); err != nil {
		c.t.Fatal(err)
	}
	cmd.Dir = home
	env, err := dirEnv(home)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Env = append(append(env, c.env...), extraEnv...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

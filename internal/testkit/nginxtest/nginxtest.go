// Package nginxtest runs a real nginx (Debian's package) for a test: on a
// free loopback port, as an unprivileged user, with everything it writes
// under a temporary prefix, stopped and removed when the test ends.
//
// The test gives the http-context part of the configuration (upstream and
// server blocks, as in a file of /etc/nginx/sites-available), which Start
// wraps in a main configuration of its own (the pid file, logs and
// temporary files under the prefix), or a complete configuration whose
// paths are relative to the prefix (StartConfig). Either way nginx runs in
// the foreground (daemon off), and the listen address is replaced by a free
// one.
//
// Where nginx is not installed, Start skips the test, or fails it when
// SWITCHBOARD_REQUIRE_NGINX=1 (scripts/test.sh sets it and installs nginx).
package nginxtest

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv names the variable that makes a missing nginx a failure.
const RequireEnv = "SWITCHBOARD_REQUIRE_NGINX"

// Binary is where Debian's package installs nginx.
const Binary = "/usr/sbin/nginx"

// nobody is the user and group nginx runs as when the test runs as root.
const nobody = 65534

// Bounds of starting and stopping; a busy 2-core machine needs the slack.
// A graceful stop waits for the requests nginx is still serving; after
// quitBound it is made fast (SIGTERM closes them), and after stopBound
// more nginx is killed.
const (
	startBound = 30 * time.Second
	quitBound  = 5 * time.Second
	stopBound  = 10 * time.Second
)

// Server is a running nginx.
type Server struct {
	// Addr is where it listens (127.0.0.1:PORT).
	Addr string
	// Prefix is its directory: nginx.conf, error.log, access.log.
	Prefix string

	http   bool // started with an http part (Start), not a whole configuration
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd.Wait has returned
	waitMu sync.Mutex
	err    error // cmd.Wait's
	stderr *Tail
}

// URL returns http://Addr followed by path.
func (s *Server) URL(path string) string { return "http://" + s.Addr + path }

// Path returns the nginx binary, or skips t (fails it under
// SWITCHBOARD_REQUIRE_NGINX=1) when it is not installed.
func Path(t testing.TB) string {
	t.Helper()
	if !supported {
		t.Skip("nginxtest runs nginx on Unix only")
	}
	path := Binary
	if _, err := os.Stat(path); err != nil {
		p, lerr := exec.LookPath("nginx")
		if lerr != nil {
			msg := fmt.Sprintf("nginx is not installed (%s: %v; not on $PATH either): apt-get install nginx, or run scripts/test.sh as root", Binary, err)
			if os.Getenv(RequireEnv) == "1" {
				t.Fatalf("%s (%s=1)", msg, RequireEnv)
			}
			t.Skip(msg)
		}
		path = p
	}
	return path
}

// Listen is the address the http configuration given to Start listens
// on; Start replaces every occurrence with the address it picked.
const Listen = "127.0.0.1:8080"

// Start runs nginx with http, the http-context configuration, in which
// Start replaces Listen by a free loopback address. It returns when nginx
// accepts connections there, and stops it when the test ends.
func Start(t testing.TB, http string) *Server {
	t.Helper()
	s := StartConfig(t, mainConfig(http))
	s.http = true
	return s
}

// StartConfig is Start with a complete configuration (main, events and
// http contexts), whose relative paths are under the prefix. It must not
// say daemon.
func StartConfig(t testing.TB, conf string) *Server {
	t.Helper()
	bin := Path(t)
	prefix := newPrefix(t)
	var lastErr error
	// A free port may be taken between picking and binding: try again then.
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(t, bin, prefix, addr, strings.ReplaceAll(conf, Listen, addr))
		if err == nil {
			return s
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

// newPrefix makes nginx's directory, owned by the user nginx runs as; it
// is removed when the test ends. As root that is nobody, which cannot
// reach into t.TempDir(), so the prefix is a directory of its own in the
// system's temporary directory.
func newPrefix(t testing.TB) string {
	t.Helper()
	prefix, err := os.MkdirTemp("", "nginxtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(prefix); err != nil {
			t.Errorf("removing nginx's prefix: %v", err)
		}
	})
	if err := os.Chmod(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(prefix, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
}

// mainConfig is a complete configuration around the test's http part:
// main and events parts, and every path under the prefix (the temporary
// file paths Debian compiles in are under /var/lib/nginx, which nobody
// cannot write).
func mainConfig(http string) string {
	return fmt.Sprintf(`# written by internal/testkit/nginxtest
worker_processes 1;
pid nginx.pid;
error_log error.log info;
events { worker_connections 1024; }
http {
	access_log access.log;
	client_body_temp_path client_body;
	proxy_temp_path proxy;
	fastcgi_temp_path fastcgi;
	uwsgi_temp_path uwsgi;
	scgi_temp_path scgi;
%s
}
`, http)
}

func start(t testing.TB, bin, prefix, addr, text string) (*Server, error) {
	t.Helper()
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	// -p: relative paths are under the prefix; -e: the error log before
	// the configuration is read (the compiled-in one,
	// /var/log/nginx/error.log, is root's).
	cmd := exec.Command(bin, "-p", prefix+"/", "-e", filepath.Join(prefix, "error.log"), "-c", conf, "-g", "daemon off;")
	cmd.Dir = prefix
	stderr := &Tail{}
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	s := &Server{Addr: addr, Prefix: prefix, cmd: cmd, done: make(chan struct{}), stderr: stderr}
	go func() {
		err := cmd.Wait()
		s.waitMu.Lock()
		s.err = err
		s.waitMu.Unlock()
		close(s.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		s.stop()
		return nil, fmt.Errorf("nginx did not start on %s: %w\nnginx's output:\n%s\nerror.log:\n%s", addr, err, stderr, s.errorLog())
	}
	t.Cleanup(func() {
		fast, err := s.stop()
		if err != nil {
			t.Errorf("stopping nginx: %v", err)
		} else if fast {
			t.Logf("nginx still served a request %v after SIGQUIT; it stopped at SIGTERM. The end of its error.log:\n%s", quitBound, tail(s.errorLog(), 2000))
		}
	})
	return s, nil
}

// Reload replaces the configuration of a running nginx (conf as Start or
// StartConfig took it: an http part for a server Start started), and
// returns once nginx runs it: its master has started new workers and every
// old one has ended, having finished the requests it was serving. A
// configuration nginx refuses fails the test with nginx's reason.
func (s *Server) Reload(t testing.TB, conf string) {
	t.Helper()
	if s.http {
		conf = mainConfig(conf)
	}
	conf = strings.ReplaceAll(conf, Listen, s.Addr)
	old, err := workers(s.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Prefix, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logged := len(s.ErrorLog())
	hangup(s.cmd.Process.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		now, err := workers(s.cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if len(now) > 0 && !overlaps(now, old) {
			return
		}
		if log := s.ErrorLog(); len(log) > logged && strings.Contains(log[logged:], "[emerg]") {
			t.Fatalf("nginx refused the new configuration:\n%s", log[logged:])
		}
		select {
		case <-s.done:
			t.Fatalf("nginx exited while reloading: %v\n%s", s.waitErr(), s.errorLog())
		case <-ctx.Done():
			t.Fatalf("nginx did not reload within %v: workers %v, before %v\n%s", startBound, now, old, s.errorLog())
		case <-tick.C:
		}
	}
}

func overlaps(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// waitReady polls the port until nginx accepts a connection, nginx exits,
// or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	var d net.Dialer
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := d.DialContext(ctx, "tcp", s.Addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("nginx exited: %v", s.waitErr())
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func (s *Server) waitErr() error {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	return s.err
}

// stop asks nginx to finish (SIGQUIT: a graceful shutdown), then after
// quitBound to finish at once (SIGTERM: fast, whatever it still serves),
// and kills its process group after stopBound more. fast says SIGTERM was
// needed; an error, that nginx had to be killed.
func (s *Server) stop() (fast bool, err error) {
	select {
	case <-s.done:
		return false, nil // exited already: Start's error said why
	default:
	}
	pid := s.cmd.Process.Pid
	quit(pid)
	select {
	case <-s.done:
		return false, nil
	case <-time.After(quitBound):
	}
	terminate(pid)
	select {
	case <-s.done:
		return true, nil
	case <-time.After(stopBound):
	}
	killGroup(pid)
	<-s.done
	return true, fmt.Errorf("nginx did not stop within %v of SIGQUIT and %v of SIGTERM; killed", quitBound, stopBound)
}

// tail is the last n bytes of text.
func tail(text string, n int) string {
	if len(text) > n {
		return "…" + text[len(text)-n:]
	}
	return text
}

// ErrorLog returns nginx's error log so far (at level info).
func (s *Server) ErrorLog() string {
	data, err := os.ReadFile(filepath.Join(s.Prefix, "error.log"))
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// errorLog returns the end of the error log, for a failure's message.
func (s *Server) errorLog() string {
	data := s.ErrorLog()
	const max = 8 << 10
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return data
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort returns a loopback port that was free a moment ago, for an
// upstream that the configuration names before it runs.
func FreePort(t testing.TB) int {
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Tail keeps the last Max bytes written to it (8 KiB if Max is 0): a
// process's output, for a failure's message.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (w *Tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if limit := cmp.Or(w.Max, 8<<10); len(w.buf) > limit {
		w.buf = w.buf[len(w.buf)-limit:]
	}
	return len(p), nil
}

func (w *Tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

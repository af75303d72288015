package nginxtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestProxy runs nginx in front of an httptest server and checks that a
// request goes through it, and that once the test is over nginx is gone
// with its files.
func TestProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "backend saw "+r.URL.Path)
	}))
	defer backend.Close()
	conf := `
upstream backend { server BACKEND; }
server {
	listen 127.0.0.1:8080;
	location / { proxy_pass http://backend; }
}`
	conf = strings.ReplaceAll(conf, "BACKEND", strings.TrimPrefix(backend.URL, "http://"))
	var s *Server
	t.Run("serve", func(t *testing.T) {
		s = Start(t, conf)
		if s.Addr == Listen {
			t.Fatalf("nginx listens on %s, the configuration's placeholder: want a free port", s.Addr)
		}
		resp, err := http.Get(s.URL("/hello"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "backend saw /hello" {
			t.Fatalf("GET through nginx: %s %q, want 200 %q\nerror.log:\n%s", resp.Status, body, "backend saw /hello", s.ErrorLog())
		}
		if os.Geteuid() == 0 {
			st, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
			if err == nil && !strings.Contains(string(st), "\nUid:\t65534\t") {
				t.Errorf("nginx runs as root; want uid 65534:\n%s", st)
			}
		}
	})
	if s == nil {
		return
	}
	if mcptest.Alive(s.cmd.Process.Pid) {
		t.Errorf("nginx (pid %d) still runs after its test ended", s.cmd.Process.Pid)
	}
	if _, err := os.Stat(s.Prefix); !os.IsNotExist(err) {
		t.Errorf("nginx's prefix %s is still there (%v)", s.Prefix, err)
	}
	if _, err := http.Get(s.URL("/")); err == nil {
		t.Errorf("%s still answers after the test ended", s.Addr)
	}
}

// TestStartConfig runs nginx with a complete configuration whose paths
// are relative to the prefix.
func TestStartConfig(t *testing.T) {
	conf := `
pid nginx.pid;
error_log error.log warn;
events { worker_connections 64; }
http {
	client_body_temp_path body;
	proxy_temp_path proxy;
	fastcgi_temp_path fastcgi;
	uwsgi_temp_path uwsgi;
	scgi_temp_path scgi;
	access_log access.log;
	server {
		listen 127.0.0.1:8080;
		location / { return 200 "complete\n"; }
	}
}`
	s := StartConfig(t, conf)
	resp, err := http.Get(s.URL("/"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "complete\n" {
		t.Fatalf("GET: %q, want %q", body, "complete\n")
	}
	if _, err := os.Stat(filepath.Join(s.Prefix, "access.log")); err != nil {
		t.Errorf("the access log is not under the prefix: %v", err)
	}
}

// TestReload reloads a running nginx with another configuration: once
// Reload returns, nginx answers with the new one, on the same address.
func TestReload(t *testing.T) {
	conf := func(body string) string {
		return "server { listen 127.0.0.1:8080; location / { return 200 \"" + body + "\"; } }"
	}
	s := Start(t, conf("one"))
	get := func() string {
		resp, err := http.Get(s.URL("/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if got := get(); got != "one" {
		t.Fatalf("before reloading: %q, want %q", got, "one")
	}
	s.Reload(t, conf("two"))
	if got := get(); got != "two" {
		t.Fatalf("after reloading: %q, want %q", got, "two")
	}
	ft := &fakeT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(failed); !ok {
					panic(r)
				}
			}
		}()
		s.Reload(ft, "server { listen 127.0.0.1:8080; no_such_directive on; }")
	}()
	if !strings.Contains(ft.msg, `unknown directive "no_such_directive"`) {
		t.Errorf("Reload with a bad configuration failed with %q; want nginx's complaint about the directive", ft.msg)
	}
	if got := get(); got != "two" {
		t.Errorf("after a refused reload: %q, want the configuration before, %q", got, "two")
	}
}

// TestBadConfig checks that a configuration nginx refuses fails Start with
// nginx's own words.
func TestBadConfig(t *testing.T) {
	Path(t)
	ft := &fakeT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(failed); !ok {
					panic(r)
				}
			}
		}()
		Start(ft, "server { listen 127.0.0.1:8080; no_such_directive on; }")
	}()
	if !strings.Contains(ft.msg, `unknown directive "no_such_directive"`) {
		t.Errorf("Start with a bad configuration failed with %q; want nginx's complaint about the directive", ft.msg)
	}
	ft.cleanup()
}

// fakeT is the testing.TB of a Start expected to fail: it records the
// failure and stops Start there (a panic the caller recovers), and runs
// the cleanups when asked.
type fakeT struct {
	testing.TB
	msg      string
	cleanups []func()
}

type failed struct{}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(failed{})
}

func (f *fakeT) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

func (f *fakeT) Errorf(format string, args ...any) { f.TB.Errorf(format, args...) }

func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func (f *fakeT) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestStopWhileServing: a request nginx still serves when the test ends
// does not keep it running: the graceful stop turns fast, and nginx is
// gone when the test's cleanup is over.
func TestStopWhileServing(t *testing.T) {
	release := make(chan struct{})
	reached := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(reached)
		select { // a stream that does not end while nginx stops
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer backend.Close()
	defer close(release)
	conf := strings.ReplaceAll(`
upstream backend { server BACKEND; }
server {
	listen 127.0.0.1:8080;
	location / { proxy_pass http://backend; proxy_read_timeout 1h; }
}`, "BACKEND", strings.TrimPrefix(backend.URL, "http://"))
	var s *Server
	t.Run("serve", func(t *testing.T) {
		s = Start(t, conf)
		go func() {
			if resp, err := http.Get(s.URL("/stream")); err == nil {
				resp.Body.Close()
			}
		}()
		<-reached
	})
	if s == nil {
		return
	}
	if mcptest.Alive(s.cmd.Process.Pid) {
		t.Errorf("nginx (pid %d) still runs after its test ended", s.cmd.Process.Pid)
	}
}

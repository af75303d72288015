package deploy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The addresses deploy/nginx/switchboard.conf names, each exactly once; a
// test substitutes its own (the team load test does too).
const (
	confListen = "127.0.0.1:8080"
	confPath   = "nginx/switchboard.conf"
)

var confReplicas = []string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}

// nginxBinary finds Debian's nginx: skipped without it, failed when
// SWITCHBOARD_REQUIRE_NGINX=1 (the test script sets it).
func nginxBinary(t *testing.T) string {
	for _, p := range []string{"/usr/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if os.Getenv("SWITCHBOARD_REQUIRE_NGINX") == "1" {
		t.Fatal("nginx is not installed and SWITCHBOARD_REQUIRE_NGINX=1 (install it: apt-get install -y nginx)")
	}
	t.Skip("nginx is not installed (apt-get install -y nginx; SWITCHBOARD_REQUIRE_NGINX=1 makes this a failure)")
	return ""
}

// backend is one replica stand-in: an httptest server that records who it
// served and how many connections it was opened.
type backend struct {
	name   string
	srv    *httptest.Server
	mu     sync.Mutex
	hits   map[string]int // per Mcp-Session-Id received ("" for none)
	conn   int            // connections opened
	minted int            // session ids handed out
	seen   []string       // "proto host" of each request
}

// stream coordinates the SSE check: the backend sends the first event,
// then waits until the client has read it before sending the second.
type stream struct {
	release chan struct{}
}

func newBackend(t *testing.T, name string, sse *stream, dying *int32Counter) *backend {
	b := &backend{name: name, hits: map[string]int{}}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.hits[r.Header.Get("Mcp-Session-Id")]++
		b.seen = append(b.seen, r.Proto+" "+r.Host)
		b.mu.Unlock()
		switch r.Header.Get("X-Test") {
		case "die":
			// The replica dies mid-call: the POST has arrived, its
			// connection closes without an answer.
			dying.add()
			io.Copy(io.Discard, r.Body)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
			return
		case "draining":
			// A draining replica refuses every request before doing
			// anything (serve.md, Readiness and shutdown); its
			// replacement would answer. Only r1 drains here.
			if name == "r1" {
				dying.add()
				w.Header().Set("Retry-After", "1")
				http.Error(w, "switchboard: this replica is shutting down", http.StatusServiceUnavailable)
				return
			}
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: first from %s\n\n", name)
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-sse.release:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "event: message\ndata: second\n\n")
			return
		}
		if r.Header.Get("X-Test") == "initialize" {
			// The replica mints the session's id, as go-sdk does on initialize.
			b.mu.Lock()
			b.minted++
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("%s-%d", name, b.minted))
			b.mu.Unlock()
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d", name, len(body))
	}))
	b.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			b.mu.Lock()
			b.conn++
			b.mu.Unlock()
		}
	}
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	return b
}

type int32Counter struct {
	mu sync.Mutex
	n  int
}

func (c *int32Counter) add() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *int32Counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// substitute replaces each address of the configuration by the test's,
// checking that each is there exactly once.
func substitute(t *testing.T, conf string, addrs map[string]string) string {
	t.Helper()
	for from, to := range addrs {
		if n := strings.Count(conf, from); n != 1 {
			t.Fatalf("%s names %s %d times, want once", confPath, from, n)
		}
		conf = strings.Replace(conf, from, to, 1)
	}
	return conf
}

// startNginx runs nginx with conf under a prefix of its own, as an
// unprivileged user, on the listener ln (inherited: nginx takes a listening
// socket from its parent through $NGINX, so there is no race for the port
// and no waiting for it to bind). It is stopped, and its files removed, at
// the end of the test.
func startNginx(t *testing.T, bin, conf string, ln *net.TCPListener) {
	t.Helper()
	prefix, err := os.MkdirTemp("", "switchboard-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prefix) })
	confFile := filepath.Join(prefix, "switchboard.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-p", prefix+"/", "-c", confFile, "-e", "stderr", "-g", "daemon off;")
	cmd.Env = append(os.Environ(), "NGINX=3;")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	// A process group of its own, so that the workers are stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		// As root nginx would run its workers as its compiled-in user and
		// write where that user may not: run it all as nobody, in a prefix
		// nobody owns.
		uid, gid := uint32(65534), uint32(65534)
		if u, err := user.Lookup("nobody"); err == nil {
			if n, err := strconv.Atoi(u.Uid); err == nil {
				uid = uint32(n)
			}
			if n, err := strconv.Atoi(u.Gid); err == nil {
				gid = uint32(n)
			}
		}
		for _, p := range []string{prefix, confFile} {
			if err := os.Chown(p, int(uid), int(gid)); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// Fast shutdown: a graceful one (SIGQUIT) would wait out lingering
		// closes, such as that of the refused 4 MiB body, for up to 30 s.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the master and its workers
			<-done
			t.Errorf("nginx did not stop within 30 s of SIGTERM; killed; its output:\n%s", stderr.String())
		}
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(prefix, "error.log")); err == nil {
				t.Logf("nginx error.log:\n%s", log)
			}
		}
	})
	// nginx checks its configuration before serving: a broken one makes it
	// exit, which a first request would only show as a refused connection.
	resp, err := http.Get("http://" + ln.Addr().String() + "/ping")
	if err != nil {
		select {
		case err := <-done:
			t.Fatalf("nginx exited: %v; its output:\n%s", err, stderr.String())
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("first request through nginx: %v; its output:\n%s", err, stderr.String())
	}
	resp.Body.Close()
}

func TestNginx(t *testing.T) {
	bin := nginxBinary(t)
	conf, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	sse := &stream{release: make(chan struct{})}
	var dying int32Counter
	var backends []*backend
	addrs := map[string]string{}
	for i, a := range confReplicas {
		b := newBackend(t, fmt.Sprintf("r%d", i+1), sse, &dying)
		backends = append(backends, b)
		addrs[a] = b.srv.Listener.Addr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	front := ln.Addr().String()
	addrs[confListen] = front
	startNginx(t, bin, substitute(t, string(conf), addrs), ln.(*net.TCPListener))
	url := "http://" + front + "/mcp"
	client := &http.Client{Timeout: 60 * time.Second}

	// post sends a POST and returns the status, the body and the
	// Mcp-Session-Id of the answer.
	post := func(session, test string, body []byte) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if test != "" {
			req.Header.Set("X-Test", test)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	reset := func() {
		for _, b := range backends {
			b.mu.Lock()
			b.hits = map[string]int{}
			b.conn = 0
			b.minted = 0
			b.seen = nil
			b.mu.Unlock()
		}
	}
	reset() // the first request of startNginx

	t.Run("session routing", func(t *testing.T) {
		defer reset()
		// Each session is opened by a request without Mcp-Session-Id on
		// some replica, which mints its id; every later request carrying
		// the id the client got must reach that replica, with the id as
		// the replica minted it.
		keyed := regexp.MustCompile(`^[0-9a-f]{32}\.((r[123])-[0-9]+)$`)
		const sessions, perSession = 30, 6
		for range sessions {
			code, body, id := post("", "initialize", []byte("{}"))
			m := keyed.FindStringSubmatch(id)
			if code != 200 || m == nil {
				t.Fatalf("initialize: status %d, Mcp-Session-Id %q (want KEY.ID with a 32-hex-digit key): %s", code, id, body)
			}
			inner, owner := m[1], m[2]
			if !strings.HasPrefix(body, owner+" ") {
				t.Fatalf("initialize answered by %q, session id %q names %s", body, id, owner)
			}
			for range perSession {
				code, body, again := post(id, "", []byte("{}"))
				if code != 200 {
					t.Fatalf("status %d: %s", code, body)
				}
				if got := strings.Fields(body)[0]; got != owner {
					t.Fatalf("a request of session %s (minted by %s) reached %s: %s", id, owner, got, hitsOf(backends))
				}
				if again != "" {
					t.Errorf("a response without a minted id came back with Mcp-Session-Id %q", again)
				}
			}
			if n := hitsOfBackend(backends, owner)[inner]; n != perSession {
				t.Errorf("%s got %d requests with its own id %s, want %d: the key was not stripped (%s)", owner, n, inner, perSession, hitsOf(backends))
			}
		}
		// 30 sessions on 3 replicas: the random keys spread them.
		used := 0
		for _, b := range backends {
			if b.minted > 0 {
				used++
			}
			// Keep-alive: sequential requests reuse connections (at most
			// one per nginx worker that sent them one).
			if reqs := total(b.hits); b.conn*2 > reqs {
				t.Errorf("%s: %d connections for %d requests: nginx does not keep HTTP/1.1 connections alive", b.name, b.conn, reqs)
			}
			for _, s := range b.seen {
				if s != "HTTP/1.1 "+front {
					t.Errorf("%s was sent %q, want HTTP/1.1 with the client's Host %s", b.name, s, front)
					break
				}
			}
		}
		if used < 2 {
			t.Errorf("30 sessions all opened on one replica: %s", hitsOf(backends))
		}
		// An id nginx did not key passes unchanged.
		if code, _, _ := post("foreign-id", "", nil); code != 200 {
			t.Errorf("a request with an unkeyed session id: status %d", code)
		}
		n := 0
		for _, b := range backends {
			n += b.hits["foreign-id"]
		}
		if n != 1 {
			t.Errorf("the unkeyed id foreign-id reached the replicas %d times unchanged, want once (%s)", n, hitsOf(backends))
		}
	})

	t.Run("no session spreads", func(t *testing.T) {
		defer reset()
		// Random keys: 60 requests miss a replica with odds below 1e-6.
		for range 60 {
			if code, body, _ := post("", "", nil); code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
		}
		for _, b := range backends {
			if b.hits[""] == 0 {
				t.Errorf("%s got none of 60 requests without Mcp-Session-Id: they are not spread (%s)", b.name, hitsOf(backends))
			}
		}
	})

	t.Run("body bound", func(t *testing.T) {
		defer reset()
		if code, body, _ := post("", "", make([]byte, 4<<20)); code != 200 {
			t.Errorf("4 MiB body: status %d, want 200 (serve takes up to 4 MiB): %s", code, body)
		}
		if code, _, _ := post("", "", make([]byte, 4<<20+1)); code != http.StatusRequestEntityTooLarge {
			t.Errorf("4 MiB + 1 body: status %d, want 413 as serve answers", code)
		}
	})

	t.Run("SSE is not buffered", func(t *testing.T) {
		defer reset()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Test", "stream")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Accept-Encoding", "gzip") // as clients do: a compressing proxy buffers
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type %q", ct)
		}
		r := bufio.NewReader(resp.Body)
		// The backend holds the second event back until the first has
		// arrived here: a buffering proxy would hold the first, and this
		// read would end only at the deadline.
		first, err := readEvent(r)
		if err != nil {
			t.Fatalf("the first event did not arrive while the stream was open (buffered?): %v", err)
		}
		close(sse.release)
		second, err := readEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(first, "data: first from r") || second != "data: second" {
			t.Errorf("events %q, %q", first, second)
		}
	})

	// Last: nginx counts a failure against the replica for a while.
	t.Run("503 of a draining replica", func(t *testing.T) {
		defer reset()
		// A GET refused by r1 is sent to another replica; a POST is not
		// (nginx would replay it after an error too), and the client gets
		// the 503. Requests are spread at random: send until r1 has refused
		// one of each, the POST first (after the GET's 503 nginx keeps
		// r1 out for fail_timeout).
		for _, method := range []string{"POST", "GET"} {
			before := dying.get()
			for i := 0; dying.get() == before; i++ {
				if i == 200 {
					t.Fatalf("r1 got no %s in 200", method)
				}
				req, err := http.NewRequest(method, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Test", "draining")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				refused := dying.get() > before
				switch {
				case method == "GET" && resp.StatusCode != 200:
					t.Fatalf("GET: status %d, want 200 from another replica after r1's 503: %s", resp.StatusCode, b)
				case method == "POST" && refused && resp.StatusCode != 503:
					t.Fatalf("POST refused by r1: status %d, want r1's 503 passed on, not a replay: %s", resp.StatusCode, b)
				}
			}
		}
	})

	t.Run("POST not replayed", func(t *testing.T) {
		start := dying.get()
		for i, session := range []string{"", strings.Repeat("ab", 16) + ".r1-1"} {
			code, _, _ := post(session, "die", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
			if n := dying.get() - start; n != i+1 {
				t.Errorf("session %q: the POST reached %d replicas in all, want %d: nginx replayed it (%v)", session, n, i+1, hitsOf(backends))
			}
			if code != http.StatusBadGateway {
				t.Errorf("session %q: status %d, want 502 when the replica dies mid-call", session, code)
			}
		}
	})
}

// readEvent reads one SSE event's data line.
func readEvent(r *bufio.Reader) (string, error) {
	var data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && data != "":
			return data, nil
		case strings.HasPrefix(line, "data: "):
			data = line
		}
	}
}

// hitsOfBackend returns a copy of the requests backend name received, per session id.
func hitsOfBackend(bs []*backend, name string) map[string]int {
	for _, b := range bs {
		if b.name == name {
			b.mu.Lock()
			defer b.mu.Unlock()
			return maps.Clone(b.hits)
		}
	}
	return nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func hitsOf(bs []*backend) string {
	var s []string
	for _, b := range bs {
		b.mu.Lock()
		s = append(s, fmt.Sprintf("%s:%v", b.name, b.hits))
		b.mu.Unlock()
	}
	return strings.Join(s, " ")
}

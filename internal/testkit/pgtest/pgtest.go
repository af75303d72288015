// Package pgtest runs a private PostgreSQL server for a test binary: the
// server of Debian's postgresql package (or any initdb and postgres on PATH),
// in a temporary directory, listening on a free 127.0.0.1 port, as an
// unprivileged user when the tests run as root. It starts on the first
// DSN or DB call and stops when Main returns (or Stop is called); each
// test gets a fresh database of its own, dropped after it.
//
// Without the server's programs a test skips, unless
// SWITCHBOARD_REQUIRE_POSTGRES=1 (the test script sets it), where it fails.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// Require is the variable that makes a missing server a failure.
const Require = "SWITCHBOARD_REQUIRE_POSTGRES"

// Main runs the package's tests, stops the server if one started, and
// exits: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

var (
	mu      sync.Mutex
	srv     *server
	srvErr  error
	started bool
	dbSeq   atomic.Int64
)

// DSN returns the URL of a new, empty database on the private server,
// dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	s := get(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return s.url(name)
}

// DB returns a handle on a new, empty database (see DSN), closed when the
// test ends.
func DB(t testing.TB) *sql.DB {
	t.Helper()
	dsn := DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Stop stops the server and removes its files. Later calls to DSN start a
// new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		srv.stop()
	}
	srv, srvErr, started = nil, nil, false
}

func get(t testing.TB) *server {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		srv, srvErr = start()
	}
	switch {
	case errors.Is(srvErr, errNoServer) && os.Getenv(Require) != "1":
		t.Skipf("pgtest: %v (install Debian's postgresql package; %s=1 makes this a failure)", srvErr, Require)
	case srvErr != nil:
		t.Fatalf("pgtest: %v", srvErr)
	}
	return srv
}

var errNoServer = errors.New("no PostgreSQL server programs (initdb, postgres) on PATH or in /usr/lib/postgresql/*/bin")

// binDir finds the directory of initdb and postgres.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) }) // newest first
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errNoServer
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

type server struct {
	dir   string // owned by the server's user; removed by stop
	port  int
	cmd   *exec.Cmd
	exit  chan struct{} // closed when the server process has exited
	admin *sql.DB
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// startTimeout bounds initdb and the server's start on a busy machine.
const startTimeout = 2 * time.Minute

func start() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir()
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, exit: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			s.stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.SysProcAttr = procAttr()
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb in %s: %v\n%s", dir, err, tail(out))
	}
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		err = s.run(ctx, bin)
		if err == nil {
			break
		}
		if attempt == 2 || ctx.Err() != nil {
			return nil, err
		}
		s.exit = make(chan struct{}) // another process took the port: again
	}
	ok = true
	return s, nil
}

// run starts the server on s.port and waits until it takes connections.
func (s *server) run(ctx context.Context, bin string) error {
	logPath := filepath.Join(s.dir, "server.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	chownForServer(logPath)
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-k", s.dir, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=300", "-c", "dynamic_shared_memory_type=mmap")
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exit := s.exit
	go func() { s.cmd.Wait(); close(exit) }()
	admin, err := sql.Open("pgx", s.url("postgres"))
	if err != nil {
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := admin.PingContext(pctx)
		cancel()
		if err == nil {
			s.admin = admin
			return nil
		}
		select {
		case <-exit:
			admin.Close()
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited before taking connections on port %d:\n%s", s.port, tail(out))
		case <-ctx.Done():
			admin.Close()
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres did not take connections within %v (last: %v):\n%s", startTimeout, err, tail(out))
		case <-tick.C:
		}
	}
}

// stopTimeout bounds a fast shutdown before the server is killed.
const stopTimeout = 30 * time.Second

func (s *server) stop() {
	if s.admin != nil {
		s.admin.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-s.exit:
		case <-time.After(stopTimeout):
			s.cmd.Process.Kill()
			<-s.exit
		}
	}
	os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of a program's output, for an error.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// WaitLockWaiters waits until at least n sessions on db's database wait for
// an advisory lock (pgstore.Lock): the server's own view of who waits, not
// a guess at how long a goroutine takes to get there.
func WaitLockWaiters(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatalf("pgtest: counting lock waiters: %v", err)
		}
		if waiting >= n {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("pgtest: %d sessions wait for an advisory lock, want %d", waiting, n)
		case <-tick.C:
		}
	}
}

package mcptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startTimeout bounds how long a server may take to accept connections. Node
// starts in well under a second, but CI runs -race builds and several test
// binaries at once on two cores.
const startTimeout = 30 * time.Second

// serve starts the command that command returns for a free loopback port,
// waits until that port accepts connections and returns the port. If the
// process exits first (another process may have taken the port in between),
// it tries again on a new port. When the test ends the process group is
// killed and the process waited for; if the test failed, the server's output
// is logged.
func serve(t testing.TB, name string, command func(port int) Command) int {
	t.Helper()
	var errs []error
	for range 3 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
		s, err := startServer(command(port))
		if err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
		err = waitListening(t.Context(), s, "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			t.Cleanup(func() {
				s.stop()
				if t.Failed() {
					t.Logf("%s output:\n%s", name, s.output.Bytes())
				}
			})
			return port
		}
		s.stop()
		errs = append(errs, fmt.Errorf("port %d: %w\n%s", port, err, s.output.Bytes()))
	}
	t.Fatalf("starting %s: %v", name, errors.Join(errs...))
	return 0
}

// A server is a started server process.
type server struct {
	cmd     *exec.Cmd
	output  bytes.Buffer  // stdout and stderr; read it only after exited is closed
	exited  chan struct{} // closed when cmd.Wait has returned
	waitErr error         // cmd.Wait's result, set before exited is closed
}

func startServer(c Command) (*server, error) {
	s := &server{cmd: c.command(), exited: make(chan struct{})}
	s.cmd.Stdout = &s.output
	s.cmd.Stderr = &s.output
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// stop kills the server's process group and waits for the server to exit.
func (s *server) stop() {
	killGroup(s.cmd)
	<-s.exited
}

// waitListening polls addr until it accepts a connection, the server exits,
// or ctx ends. Polling is the only way to learn when another program has
// started listening without parsing its log.
func waitListening(ctx context.Context, s *server, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited before listening: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to accept connections: %w", addr, ctx.Err())
		case <-tick.C:
		}
	}
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

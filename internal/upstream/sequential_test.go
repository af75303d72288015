package upstream_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestSequentialServerAsksDuringACall guards a server that handles one
// message at a time and asks for the client's roots during a call while
// Switchboard has a request of its own outstanding (a second call the
// server keeps until the first is done): Switchboard answers the server's
// question without waiting for its own request, and both calls end. The
// server says on stderr when it has the first call, and reads the second
// before it asks, so the order is fixed.
func TestSequentialServerAsksDuringACall(t *testing.T) {
	srv := acceptsClient(fixture("seq", testserver.Sequential))
	called := make(chan struct{}, 1)
	h := newPool(t, []*config.Server{srv}, &upstream.Options{Roots: roots("file:///a", "file:///b"), Stderr: func(_, line string) {
		if strings.Contains(line, "ask-roots: called") {
			called <- struct{}{}
		}
	}})
	if _, err := h.Tools(t.Context(), "seq"); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		text string
		err  error
	}
	first := make(chan answer, 1)
	go func() {
		text, err := h.call(t.Context(), "seq", "ask-roots", nil)
		first <- answer{text, err}
	}()
	// The second call is the request the server keeps: it is sent once the
	// first has reached the server, which answers it only after the first.
	select {
	case <-called:
	case a := <-first:
		t.Fatalf("the first call ended before the server had it: %q, %v", a.text, a.err)
	}
	second, err := h.call(t.Context(), "seq", "echo", nil)
	if err != nil || second != "echo" {
		t.Errorf("the call the server kept: %q, %v", second, err)
	}
	a := <-first
	if a.err != nil || a.text != "file:///a,file:///b" {
		t.Errorf("the call that asked for the roots: %q, %v; want file:///a,file:///b", a.text, a.err)
	}
}

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCallTimesOutOnce runs switchboard call against an HTTP server that
// never answers, and checks that the command connects once: the tool's
// lookup, which types key=value arguments, fails to connect, and its error
// is the command's. Connecting again for the call itself took the request
// timeout a second time, so that the error said 1s after 2s had passed.
// Counting the attempts holds the bound without timing anything.
func TestCallTimesOutOnce(t *testing.T) {
	var initializes atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			initializes.Add(1)
		}
		<-r.Context().Done() // never answers; ends when switchboard hangs up
	}))
	defer ts.Close()
	home := serveHome(t, map[string]any{"h": map[string]any{"url": ts.URL + "/mcp", "requestTimeoutMs": 1000, "protocolVersion": "legacy"}}, nil)
	for _, args := range [][]string{{"echo", "text=hi"}, {"echo", "--json"}} {
		var out bytes.Buffer
		cmd := switchboardCmd(t, home, append([]string{"call", "--server", "h"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err == nil {
			t.Fatalf("call %v succeeded: %s", args, out.String())
		}
		if got := out.String(); !strings.Contains(got, `connecting \"h\": timed out after 1s`) && !strings.Contains(got, `connecting "h": timed out after 1s`) {
			t.Errorf("call %v said %q, want the timeout", args, got)
		}
		if got := initializes.Swap(0); got != 1 {
			t.Errorf("call %v connected %d times, want once", args, got)
		}
	}
}

package upstream_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// sizedServers returns the Sized fixture over every transport: stdio, and
// in process over Streamable HTTP (event-stream and JSON responses) and
// legacy SSE.
func sizedServers(t *testing.T) []*config.Server {
	serve := func(h http.Handler) string {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return ts.URL
	}
	get := func(*http.Request) *mcp.Server { return testserver.SizedServer() }
	// Megabytes under the race detector on a busy machine take long: the
	// request timeout is generous, as it is not what is tested.
	const timeout = 2 * time.Minute
	stdio := fixture("stdio", testserver.Sized)
	stdio.RequestTimeout = timeout
	return []*config.Server{
		stdio,
		{Name: "stream", Type: config.TransportHTTP, URL: serve(mcp.NewStreamableHTTPHandler(get, nil)),
			RequestTimeout: timeout, ProtocolVersion: "auto"},
		{Name: "json", Type: config.TransportHTTP, URL: serve(mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true})),
			RequestTimeout: timeout, ProtocolVersion: "auto"},
		{Name: "sse", Type: config.TransportSSE, URL: serve(mcp.NewSSEHandler(get, nil)),
			RequestTimeout: timeout, ProtocolVersion: "legacy"},
	}
}

// TestReadCap reads a 9 MiB resource and gets a 9 MiB prompt on every
// transport: each is refused with an error that names the cap, and the
// connection stays usable.
func TestReadCap(t *testing.T) {
	servers := sizedServers(t)
	h := newPool(t, servers, nil)
	const nine = 9 << 20
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			ctx := t.Context()
			res, err := h.ReadResource(ctx, s.Name, fmt.Sprintf("big://%d", nine))
			checkRefused(t, err, res, fmt.Sprintf("reading a resource on %q", s.Name), "cap of 8 MiB on a resource")
			pr, err := h.GetPrompt(ctx, s.Name, "big", map[string]string{"bytes": fmt.Sprint(nine)})
			checkRefused(t, err, pr, fmt.Sprintf("getting prompt \"big\" on %q", s.Name), "cap of 8 MiB on a prompt")

			if res, err := h.ReadResource(ctx, s.Name, "big://10"); err != nil || res.Contents[0].Text != "xxxxxxxxxx" {
				t.Errorf("a small resource after the refusal: %v, %v", res, err)
			}
			if st := h.status(s.Name); st.State != upstream.StateConnected {
				t.Errorf("state after the refusals: %s (%s), want connected", st.State, st.Error)
			}
		})
	}
}

func checkRefused[T any](t *testing.T, err error, got *T, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got a result, want the read cap's error")
	}
	if got != nil {
		t.Errorf("got a result besides the error")
	}
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Class != upstream.ClassBound || !errors.Is(err, upstream.ErrBound) {
		t.Errorf("error %v: want an *upstream.Error of class bound", err)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestReadCapBoundary checks the cap at its exact boundary on every
// transport: a result of exactly MaxReadBytes of JSON passes, one byte more
// is refused.
func TestReadCapBoundary(t *testing.T) {
	const limit = 3000
	servers := sizedServers(t)
	h := newPool(t, servers, &upstream.Options{MaxReadBytes: limit})
	// What a server adds around the text depends on the protocol version:
	// the refusal of a text as long as the cap says how much.
	atCap := func(t *testing.T, get func(n int) error) int {
		err := get(limit)
		var size int
		if err == nil || !strings.Contains(err.Error(), "result of ") {
			t.Fatalf("a text as long as the cap: %v, want a refusal", err)
		}
		fmt.Sscanf(err.Error()[strings.Index(err.Error(), "result of "):], "result of %d bytes", &size)
		return limit - (size - limit)
	}
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			ctx := t.Context()
			r := atCap(t, func(n int) error {
				_, err := h.ReadResource(ctx, s.Name, fmt.Sprintf("big://%d", n))
				return err
			})
			p := atCap(t, func(n int) error {
				_, err := h.GetPrompt(ctx, s.Name, "big", map[string]string{"bytes": fmt.Sprint(n)})
				return err
			})
			if res, err := h.ReadResource(ctx, s.Name, fmt.Sprintf("big://%d", r)); err != nil || len(res.Contents[0].Text) != r {
				t.Errorf("a resource of exactly the cap: %v", err)
			}
			res, err := h.ReadResource(ctx, s.Name, fmt.Sprintf("big://%d", r+1))
			checkRefused(t, err, res, fmt.Sprintf("result of %d bytes refused", limit+1), "cap of 3000 bytes on a resource")
			if pr, err := h.GetPrompt(ctx, s.Name, "big", map[string]string{"bytes": fmt.Sprint(p)}); err != nil || len(pr.Messages) != 1 {
				t.Errorf("a prompt of exactly the cap: %v", err)
			}
			pr, err := h.GetPrompt(ctx, s.Name, "big", map[string]string{"bytes": fmt.Sprint(p + 1)})
			checkRefused(t, err, pr, fmt.Sprintf("result of %d bytes refused", limit+1), "cap of 3000 bytes on a prompt")
			// Tool results are not capped by it.
			if got, err := h.call(ctx, s.Name, "sized", map[string]any{"bytes": 2 * limit}); err != nil || len(got) != 2*limit {
				t.Errorf("a tool result over the read cap: %d bytes, %v", len(got), err)
			}
		})
	}
}

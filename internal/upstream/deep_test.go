package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestDeepResult calls a stdio server whose result nests too deeply for
// go-sdk's decoder (1,001 levels: the connection used to end) and for
// encoding/json's (20,000: the line was dropped as "not JSON" and the call
// waited out its whole timeout): the call fails at once, saying why, on
// go-sdk's path and on the fast path, and the connection serves the next
// call.
func TestDeepResult(t *testing.T) {
	path, args, env := hostile.Command(hostile.Deep)
	srv := &config.Server{Name: "deep", Type: config.TransportStdio, Command: path, Args: args, Env: env,
		RequestTimeout: time.Hour, ProtocolVersion: "auto", Lifecycle: config.LifecycleLazy}
	h := newPool(t, []*config.Server{srv}, nil)
	const want = "nests deeper than 1000 levels"
	for _, levels := range []int{1001, 20000} {
		t.Run(fmt.Sprint(levels), func(t *testing.T) {
			// A call that waits out its timeout fails the test here
			// instead: this bounds the test, it is not what it measures.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			_, err := h.CallTool(ctx, "deep", "deep", map[string]any{"levels": levels})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("go-sdk's path: err = %v, want one saying the result %s", err, want)
			}
			raw, res, err := h.CallToolRaw(ctx, "deep", "deep", json.RawMessage(fmt.Sprintf(`{"levels":%d}`, levels)))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("the fast path: %v, %v, err = %v, want one saying the result %s", raw, res, err, want)
			}
			if got, err := h.call(ctx, "deep", "echo", nil); err != nil || got != "small" {
				t.Errorf("the next call: %q, %v; want small", got, err)
			}
			if st := h.status("deep"); st.Generation != 1 {
				t.Errorf("generation %d, want 1: the connection survives", st.Generation)
			}
		})
	}
}

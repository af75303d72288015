package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/otlptest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// canary is the secret the hostile server leaks: it must appear in no
// log, trace, audit record or error.
const canary = "canary-7f3a9c51e2d84b06"

// TestSecretsLeaveNoTrace stores a canary with switchboard secret set,
// gives it to a hostile server as ${secret:CANARY} in its env, and has the
// server put it everywhere switchboard writes things down: on its stderr
// and in a log message (leak), in its result (reveal), in a JSON-RPC error
// (fail), and on stderr
// just before it dies in the middle of a call (die), through serve over
// stdio with traces on (transparent mode, which passes the client's log
// level on, so that log messages flow) and through the CLI. The canary is then in none of
// serve.log, switchboard logs, the trace export, the audit trail (which
// keeps results here), the results and errors the client got, the log
// messages forwarded to it, or the CLI's output; "[redacted]" is, where the
// server's words were kept.
func TestSecretsLeaveNoTrace(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	recv := otlptest.New(t)
	path, args, env := hostile.Command(hostile.Leaker)
	env["LEAKED"] = "${secret:CANARY}"
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	home := serveHome(t, map[string]any{"h": map[string]any{"command": path, "args": args, "env": env}},
		map[string]any{"toolPrefix": "none", "credentialStore": "file", "audit": map[string]any{"payloads": true}, "telemetry": map[string]any{"endpoint": recv.URL}})
	set := switchboardCmd(t, home, "secret", "set", "CANARY")
	set.Stdin = strings.NewReader(canary + "\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("secret set: %v: %s", err, out)
	}

	var seen strings.Builder // everything the client was sent
	var logMu sync.Mutex
	var logMessages strings.Builder // the log messages, from go-sdk's goroutines
	logged := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logMu.Lock()
			logMessages.WriteString(req.Params.Logger + " " + toText(req.Params.Data) + "\n")
			logMu.Unlock()
			select {
			case logged <- struct{}{}:
			default:
			}
		},
	})
	cmd, cs := serveStdio(t, home, client)
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"leak", "reveal", "fail", "die", "leak"} { // leak again: die ended the first child
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"name": "LEAKED"}})
		if err != nil {
			seen.WriteString(err.Error() + "\n")
			continue
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				seen.WriteString(tool + ": " + tc.Text + "\n")
			}
		}
		if res.StructuredContent != nil {
			seen.WriteString(tool + " structured: " + toText(res.StructuredContent) + "\n")
		}
	}
	<-logged // the leak's log message reached the client
	cs.Close()
	_ = cmd.Wait()
	logMu.Lock()
	seen.WriteString(logMessages.String())
	logMu.Unlock()

	// The CLI, which prints a call's result or error.
	for _, tool := range []string{"reveal", "fail", "die"} {
		var out bytes.Buffer
		call := switchboardCmd(t, home, "call", tool, "--server", "h", "name=LEAKED")
		call.Stdout, call.Stderr = &out, &out
		_ = call.Run()
		seen.WriteString("cli " + tool + ": " + withoutUnencryptedWarning(out.String()))
	}
	var logsOut bytes.Buffer
	logs := switchboardCmd(t, home, "logs")
	logs.Stdout, logs.Stderr = &logsOut, &logsOut
	if err := logs.Run(); err != nil {
		t.Fatalf("switchboard logs: %v: %s", err, logsOut.String())
	}

	state := filepath.Join(home, ".local", "state", "switchboard")
	serveLog, err := os.ReadFile(filepath.Join(state, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(filepath.Join(state, policy.AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]string{
		"what the client was sent": seen.String(),
		"serve.log":                string(serveLog),
		"switchboard logs":         logsOut.String(),
		"the audit trail":          string(audit),
	}
	for name, text := range sinks {
		if strings.Contains(text, canary) {
			t.Errorf("the canary is in %s:\n%s", name, text)
		}
	}
	if recv.Contains(canary) {
		t.Error("the canary is in the trace export")
	}
	if len(recv.Spans()) == 0 {
		t.Error("no span was exported: the trace export was not checked")
	}
	// The server's words reached each sink, its secret replaced.
	for _, w := range []struct{ sink, want string }{
		{"serve.log", `line="LEAKED=[redacted]"`},
		{"switchboard logs", `line="LEAKED=[redacted]"`},
		{"the audit trail", `LEAKED=[redacted]`},
		{"what the client was sent", "hostile LEAKED=[redacted]"},           // the log message
		{"what the client was sent", "reveal: LEAKED=[redacted]"},           // the result
		{"what the client was sent", `structured: {"LEAKED":"[redacted]"}`}, // its structured content
		{"what the client was sent", "failed: LEAKED=[redacted]"},           // the error
		{"what the client was sent", "fatal: LEAKED=[redacted]"},            // the dying server's stderr, quoted
		{"what the client was sent", "cli reveal: LEAKED=[redacted]"},
		{"what the client was sent", "cli die: calling \"die\" on \"h\": exited with status 3: fatal: LEAKED=[redacted]"},
	} {
		if !strings.Contains(sinks[w.sink], w.want) {
			t.Errorf("%s has no %q: the check proves nothing\n%s", w.sink, w.want, sinks[w.sink])
		}
	}
}

// toText is a log message's data as text.
func toText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

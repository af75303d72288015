package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// encoding is the tokenizer: o200k_base, GPT-4o's and later models'.
const encoding = "o200k_base"

// tally is what one route of one task put through the model's context.
type tally struct {
	tokens int           // requests the model wrote and result texts it read
	trips  int           // model round trips: one per tool call
	wall   time.Duration // from the first request to the last result
}

// agent is a model's side of a session with switchboard serve: every
// call it makes is counted, request and result text, as the model would
// write and read them.
type agent struct {
	cs      *mcp.ClientSession
	enc     *tiktoken.Tiktoken
	log     io.Writer // nil: quiet
	t       tally
	started time.Time
}

func (a *agent) tokens(s string) int { return len(a.enc.Encode(s, nil, nil)) }

// call calls a tool of serve (mcp or mcpScript) with args, counts the
// request (the tool's name and its arguments as JSON, as the model writes
// them) and the result's text, and returns the text; a tool error is an
// error.
func (a *agent) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	req, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	if a.t.trips == 0 {
		a.started = time.Now()
	}
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	a.t.wall = time.Since(a.started)
	if err != nil {
		return "", fmt.Errorf("calling %s %s: %w", tool, req, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	text := b.String()
	a.t.trips++
	a.t.tokens += a.tokens(tool) + a.tokens(string(req)) + a.tokens(text)
	if a.log != nil {
		fmt.Fprintf(a.log, "→ %s %s\n← %s\n", tool, req, text)
	}
	if res.IsError {
		return text, fmt.Errorf("%s %s answered an error: %s", tool, req, text)
	}
	return text, nil
}

// mcp makes one request of the mcp tool.
func (a *agent) mcp(ctx context.Context, req map[string]any) (string, error) {
	return a.call(ctx, "mcp", req)
}

// tool calls a server's tool through the mcp tool and returns the
// server's text: the mcp tool's answer less the lines it adds around it.
func (a *agent) tool(ctx context.Context, server, name string, args map[string]any) (string, error) {
	return a.mcp(ctx, map[string]any{"server": server, "tool": name, "args": args})
}

// script runs src through mcpScript.
func (a *agent) script(ctx context.Context, src string) (string, error) {
	return a.call(ctx, "mcpScript", map[string]any{"script": src})
}

// serve is a switchboard serve over stdio with the three servers and
// script mode on, in its own home.
type serve struct {
	cs  *mcp.ClientSession
	enc *tiktoken.Tiktoken
}

func loadEncoding() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	return tiktoken.GetEncoding(encoding)
}

// startServe writes the configuration into home and starts bin serve.
func startServe(ctx context.Context, bin, home string, servers map[string]any) (*mcp.ClientSession, error) {
	doc := map[string]any{"mcpServers": servers, "settings": map[string]any{"scriptMode": true}}
	data, _ := json.MarshalIndent(doc, "", "  ")
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "SWITCHBOARD_CONFIG=")
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "codemode-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting switchboard serve: %w", err)
	}
	return cs, nil
}

package oauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Asker is a person's MCP client that supports URL elicitation: it
// records the authorization URLs it is sent and, when it accepts, follows
// each in the person's browser (Follow), which approves at once.
type Asker struct {
	mu     sync.Mutex
	urls   []string
	accept bool
}

// NewAsker returns an Asker that accepts, or declines, what it is sent.
func NewAsker(accept bool) *Asker { return &Asker{accept: accept} }

// Options are the client's options: URL elicitation declared, and
// handled.
func (a *Asker) Options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.mu.Lock()
			a.urls = append(a.urls, req.Params.URL)
			accept := a.accept
			a.mu.Unlock()
			if !accept {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			if _, err := Follow(ctx, req.Params.URL); err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
}

// Asked returns the URLs sent so far.
func (a *Asker) Asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.urls...)
}

// SetAccept makes the client accept, or decline, from now on.
func (a *Asker) SetAccept(v bool) {
	a.mu.Lock()
	a.accept = v
	a.mu.Unlock()
}

// A TokenLog records the bearer token each tools/call reached the MCP
// server with, by the "text" argument it carried (the echo tool's): wrap
// the server with it (Options.Wrap).
type TokenLog struct {
	mu    sync.Mutex
	calls map[string][]string
}

// Wrap records each tools/call's token before next handles it.
func (l *TokenLog) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Arguments struct {
						Text string `json:"text"`
					} `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				l.mu.Lock()
				if l.calls == nil {
					l.calls = map[string][]string{}
				}
				l.calls[msg.Params.Arguments.Text] = append(l.calls[msg.Params.Arguments.Text], tok)
				l.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Tokens returns the tokens of the calls that carried text.
func (l *TokenLog) Tokens(text string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls[text]...)
}

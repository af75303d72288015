package panel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Backend is what the panel shows and drives: an engine in this process
// (Local), or a running gateway's admin endpoint (Remote), which is
// read-only but for reconnecting a server and deciding the calls that
// wait for an approver group (Remote.Decide).
type Backend interface {
	// Status is every server's status and the configuration's problems.
	Status(ctx context.Context) (front.AdminStatus, error)
	// Calls are the recent tool calls, newest first.
	Calls(ctx context.Context) ([]proxy.CallRecord, error)
	// Reconnect closes a server's connection and connects it again.
	Reconnect(ctx context.Context, server string) error
	// Where names what the panel shows: "local" or the gateway's URL.
	Where() string
	// Local is the rest, nil when the backend is read-only.
	Local() *Local
}

// ErrReadOnly is the answer of an attached panel to an action only a
// local one can take.
var ErrReadOnly = errors.New("an attached panel is read-only: it can reconnect a server and decide approvals, nothing else")

// Local drives an engine in this process.
type Local struct {
	mu     sync.Mutex
	Engine *switchboard.Engine  // replaced by Reload; read it with Current
	Config *config.Config       // the configuration Engine runs
	Log    *switchboard.CallLog // the log the engine's Options.OnCall feeds
	// Dirs are where the configuration lives, for enable and disable,
	// which write Switchboard's own file as the commands do.
	Dirs config.Dirs
	// Login logs a server in with OAuth (the command line's browser
	// prompter); nil: the panel says which command does it.
	Login func(ctx context.Context, server string) error
	// Reload makes a new engine after the configuration changed (enable,
	// disable); the panel then uses it and closes the one it replaces.
	// Nil: the change shows on the next start.
	Reload func(ctx context.Context) (*switchboard.Engine, *config.Config, error)
}

// Current returns the engine in use.
func (l *Local) Current() *switchboard.Engine {
	eng, _ := l.current()
	return eng
}

func (l *Local) current() (*switchboard.Engine, *config.Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Engine, l.Config
}

// Status implements Backend.
func (l *Local) Status(ctx context.Context) (front.AdminStatus, error) {
	eng, cfg := l.current()
	calls, _ := l.Calls(ctx)
	return front.AdminStatusOf(eng.Status(ctx), cfg, calls), nil
}

// Calls implements Backend.
func (l *Local) Calls(context.Context) ([]proxy.CallRecord, error) {
	if l.Log == nil {
		return []proxy.CallRecord{}, nil
	}
	return l.Log.Recent(), nil
}

// Reconnect implements Backend.
func (l *Local) Reconnect(ctx context.Context, server string) error {
	r := front.ReconnectResult(server, l.Current().Do(ctx, &proxy.Request{Action: proxy.ActionReconnect, Server: server}))
	if !r.OK {
		return errors.New(r.Error)
	}
	return nil
}

// FirstRun is config.FirstRun of the other hosts whose files define
// servers: what the panel shows when no server is configured.
func (l *Local) FirstRun() []string {
	_, cfg := l.current()
	d := l.Dirs
	if cfg != nil {
		d = cfg.Dirs
	}
	return config.FirstRun(config.OtherHosts(d))
}

// Where implements Backend.
func (l *Local) Where() string { return "local" }

// Local implements Backend.
func (l *Local) Local() *Local { return l }

// do carries out one request of the proxy tool; an error result is an
// error with the result's text.
func (l *Local) do(ctx context.Context, req *proxy.Request) (*proxy.Result, error) {
	r := l.Current().Do(ctx, req)
	if r.IsError && req.Action != proxy.ActionCall {
		return r, errors.New(r.Text)
	}
	return r, nil
}

// Connect connects a server and lists its tools.
func (l *Local) Connect(ctx context.Context, server string) ([]proxy.ToolInfo, error) {
	r, err := l.do(ctx, &proxy.Request{Action: proxy.ActionServer, Server: server})
	if err != nil {
		return nil, err
	}
	return r.Details.Tools, nil
}

// Search is the proxy tool's search, across every server.
func (l *Local) Search(ctx context.Context, query string) ([]proxy.ToolInfo, error) {
	r, err := l.do(ctx, &proxy.Request{Action: proxy.ActionSearch, Query: query, Limit: proxy.MaxLimit})
	if err != nil {
		return nil, err
	}
	return r.Details.Tools, nil
}

// Describe describes one tool in full.
func (l *Local) Describe(ctx context.Context, server, tool string) (*proxy.ToolDetail, error) {
	r, err := l.do(ctx, &proxy.Request{Action: proxy.ActionDescribe, Server: server, Name: tool})
	if err != nil {
		return nil, err
	}
	if r.Details.Tool == nil {
		return nil, fmt.Errorf("describing %q on %q gave no tool", tool, server)
	}
	return r.Details.Tool, nil
}

// Call calls a tool once and returns its result, bounded as the proxy
// tool bounds it (spill files named in Details.Spills).
func (l *Local) Call(ctx context.Context, server, tool string, args map[string]any) *proxy.Result {
	r, _ := l.do(ctx, &proxy.Request{Action: proxy.ActionCall, Server: server, Name: tool, Args: args})
	return r
}

// Index (re)builds a server's catalog entry.
func (l *Local) Index(ctx context.Context, server string) (switchboard.IndexResult, error) {
	res, err := l.Current().Index(ctx, []string{server}, nil)
	if err != nil {
		return switchboard.IndexResult{}, err
	}
	if len(res) == 0 {
		return switchboard.IndexResult{}, fmt.Errorf("indexing %q gave no result", server)
	}
	if res[0].Error != "" {
		return res[0], errors.New(res[0].Error)
	}
	return res[0], nil
}

// SetDisabled enables or disables a server in Switchboard's own
// user-global file, keeping its comments, as switchboard enable and
// disable do, and reloads the engine. It returns the file written.
func (l *Local) SetDisabled(ctx context.Context, server string, disabled bool) (string, error) {
	path, err := config.SetDisabled(l.Dirs, config.ScopeGlobal, server, disabled)
	if err != nil {
		return "", err
	}
	if s, ok := config.Load(l.Dirs).Server(server); ok && s.Disabled != disabled {
		return path, fmt.Errorf("%q is unchanged: %s overrides %s (hint: switchboard %s %s --project)",
			server, s.Source.Path, path, map[bool]string{true: "disable", false: "enable"}[disabled], server)
	}
	if l.Reload != nil {
		eng, cfg, err := l.Reload(ctx)
		if err != nil {
			return path, err
		}
		l.mu.Lock()
		old := l.Engine
		l.Engine, l.Config = eng, cfg
		l.mu.Unlock()
		old.Close()
	}
	return path, nil
}

// Remote reads a running gateway's admin endpoint (switchboard serve
// --http); see front.Admin. It changes nothing there but for two
// actions: reconnecting a server, and allowing or denying a call that
// waits for an approver group (Decide).
type Remote struct {
	// Base is the gateway's URL, such as http://127.0.0.1:8080 (a /mcp at
	// the end is dropped).
	Base   string
	Token  string // the bearer token, if the gateway has one
	Client *http.Client
}

// NewRemote checks url and returns a backend that reads it.
func NewRemote(rawURL, token string) (*Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--attach needs the gateway's URL, such as http://127.0.0.1:8080; got %q", rawURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp")
	u.RawQuery, u.Fragment = "", ""
	return &Remote{Base: u.String(), Token: token, Client: &http.Client{Timeout: 30 * time.Second}}, nil
}

// Status implements Backend.
func (r *Remote) Status(ctx context.Context) (front.AdminStatus, error) {
	var st front.AdminStatus
	err := r.get(ctx, "GET", "/admin/status", &st)
	return st, err
}

// Calls implements Backend.
func (r *Remote) Calls(ctx context.Context) ([]proxy.CallRecord, error) {
	var body struct {
		Calls []proxy.CallRecord `json:"calls"`
	}
	err := r.get(ctx, "GET", "/admin/calls", &body)
	return body.Calls, err
}

// Reconnect implements Backend.
func (r *Remote) Reconnect(ctx context.Context, server string) error {
	var res front.AdminReconnect
	err := r.get(ctx, "POST", "/admin/reconnect?server="+url.QueryEscape(server), &res)
	if err == nil && !res.OK {
		err = errors.New(res.Error)
	}
	return err
}

// Where implements Backend.
func (r *Remote) Where() string { return r.Base }

// Local implements Backend: an attached panel has none.
func (r *Remote) Local() *Local { return nil }

// get makes one request and decodes its JSON answer into v. An error
// names the URL and the status, and the body's first line, which the
// gateway writes for people ("missing or wrong bearer token").
func (r *Remote) get(ctx context.Context, method, path string, v any) error {
	return r.send(ctx, method, path, nil, v)
}

// send is get with a JSON body (nil for none).
func (r *Remote) send(ctx context.Context, method, path string, in, v any) error {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.Base+path, rd)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return fmt.Errorf("reaching the gateway: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s%s: reading the answer: %w", method, r.Base, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s %s%s: 401 Unauthorized (hint: give the gateway's token in SWITCHBOARD_TOKEN or --token-file)", method, r.Base, path)
	case resp.StatusCode == http.StatusNotFound && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")):
		return fmt.Errorf("%s %s%s: 404 Not Found: the gateway serves no admin endpoint (hint: a gateway off loopback offers it with serve --admin)", method, r.Base, path)
	case resp.StatusCode != http.StatusOK && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")):
		line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		return fmt.Errorf("%s %s%s: %s: %s", method, r.Base, path, resp.Status, line)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s %s%s: %s: the answer is not the admin endpoint's JSON: %w", method, r.Base, path, resp.Status, err)
	}
	return nil
}

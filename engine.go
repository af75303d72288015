package switchboard

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Engine is Switchboard embedded in a Go program: the proxy tool and every
// operation behind it, over one configuration. Its methods are safe for
// concurrent use.
type Engine struct {
	core     *gateway.Engine
	sections sections // AddSection
}

// New returns an engine over cfg. It starts no server unless one's
// lifecycle says so (eager, keep-alive), opens the catalog, and removes the
// spill directories of processes that died without cleaning up. A
// configuration that failed closed still makes an engine: status works, and
// every operation on a server reports the configuration's error. Close the
// engine when done.
func New(ctx context.Context, cfg *config.Config, opts *Options) (*Engine, error) {
	core, err := gateway.New(ctx, cfg, (*gateway.Options)(opts))
	if err != nil {
		return nil, err
	}
	return &Engine{core: core}, nil
}

// Close records the servers' last failures in the catalog, closes every
// connection, stops every child process, removes this process's spill
// files (unless Options.KeepSpills) and closes the catalog. It waits for
// the engine's goroutines, the Subscribe callbacks among them. It is
// idempotent, safe to call concurrently, and bounded in time (seconds).
func (e *Engine) Close() error { return e.core.Close() }

// Tool returns the proxy tool's definition, to register with the host. The
// description names the configured servers and is byte-stable for a given
// configuration and catalog.
func (e *Engine) Tool(ctx context.Context) proxy.Tool { return e.core.Tool(ctx) }

// Handle carries out one call of the proxy tool with its raw JSON arguments
// and returns what the model sees: its text, images, and details (see
// proxy.Result; Result.MCP makes it an MCP tool result). Invalid arguments
// are an error result that connects nothing. Every result is within
// settings.output: what does not fit is in spill files the result names.
func (e *Engine) Handle(ctx context.Context, args json.RawMessage) *proxy.Result {
	return e.core.Handle(ctx, args)
}

// Do carries out a request made in Go rather than parsed from JSON, as
// Handle does after proxy.Parse.
func (e *Engine) Do(ctx context.Context, req *proxy.Request) *proxy.Result {
	return e.core.Do(ctx, req)
}

// WithProgress returns a context whose tool calls (the call request, from
// Handle or Do, of the engine or a session) ask the server for progress
// notifications and pass each to f, for a host that shows its user how a
// long call is going. f is called on a goroutine of the connection's,
// never concurrently for one call, and not once the call has returned (a
// notification the server sent just before its result may come after it,
// and is then dropped); it must not block for long. The notification's
// Message is the server's: untrusted text. Its ProgressToken is the
// engine's own.
func WithProgress(ctx context.Context, f func(*mcp.ProgressNotificationParams)) context.Context {
	return gateway.WithProgress(ctx, f)
}

// NewSession returns a session of the engine for one agent: the resource
// references it is given are its own. Handle and Do share one session;
// give each agent its own where several share an engine.
func (e *Engine) NewSession() *Session { return &Session{s: e.core.NewSession()} }

// Session is one agent's view of the engine; connections and the catalog
// are shared by all sessions. Its methods are safe for concurrent use.
type Session struct {
	s *gateway.Session
}

// AllowOnly gives the session an allow list, deny by default: it finds,
// describes and calls only the tools the patterns match, each written
// mcp__SERVER__GLOB (mcp__github__* for every tool of github,
// mcp__github__get_* for some), as agent orchestrators write them. Other
// sessions are not affected; settings.includeTools still applies. It
// replaces an earlier list; a pattern not so written is an error.
func (s *Session) AllowOnly(patterns ...string) error { return s.s.AllowOnly(patterns) }

// Handle is Engine.Handle in this session.
func (s *Session) Handle(ctx context.Context, args json.RawMessage) *proxy.Result {
	return s.s.Handle(ctx, args)
}

// Do is Engine.Do in this session.
func (s *Session) Do(ctx context.Context, req *proxy.Request) *proxy.Result {
	return s.s.Do(ctx, req)
}

// ScriptTool returns the code-mode tool's definition (mcpScript), to
// register beside Tool's when the host offers code mode, as serve does
// with settings.scriptMode (see docs/codemode.md).
func ScriptTool() proxy.Tool {
	return proxy.Tool{Name: proxy.ScriptToolName, Description: proxy.ScriptToolDescription, InputSchema: proxy.ScriptInputSchema}
}

// RunScript runs a code-mode script (JavaScript: the body of an async
// function, with tools.search, tools.describe and tools.call; see
// docs/codemode.md) in the engine's shared session. Every call it makes
// is an ordinary call of the session, under the same approval rules,
// pins and audit trail; the run is bounded by settings.scriptTimeoutMs,
// a cap on calls and a memory bound, and its answer by settings.output,
// as any result. ctx's cancellation stops the script and its calls.
func (e *Engine) RunScript(ctx context.Context, src string) *proxy.Result {
	return e.core.RunScript(ctx, src)
}

// RunScript is Engine.RunScript in this session: its calls are the
// session's, under its allow list and the approvals given for it.
func (s *Session) RunScript(ctx context.Context, src string) *proxy.Result {
	return s.s.RunScript(ctx, src)
}

// Status returns every configured server's status, by name, and every
// server whose definition is too broken to configure anything (state
// "invalid"). It never connects. A server this engine has not used yet
// shows the last failure any process recorded in the catalog: "needs-auth"
// after a refused authorization, "failed" after any other.
func (e *Engine) Status(ctx context.Context) []proxy.ServerStatus { return e.core.Status(ctx) }

// EventKind is what an Event tells of. More kinds may come (approvals,
// logins): a subscriber ignores those it does not know.
type EventKind int

const (
	// ServerState: a server's state changed (connected, failed,
	// needs-auth, …, or its last error).
	ServerState EventKind = iota + 1
	// ServerLists: what a server offers changed: its tools, resources,
	// resource templates or prompts, as the catalog now has them (after
	// notifications/tools/list_changed, or a new connection).
	ServerLists
)

// Event is one change of a server, with its status after the change.
type Event struct {
	Kind   EventKind
	Server string
	Status proxy.ServerStatus
}

// Subscribe calls f with every change of a server's state or lists until
// the returned function is called. f runs on a goroutine of the engine's,
// with a context that Close cancels (Close waits for f to return). Events
// of one server come in order; those of different servers may come
// concurrently. f must not block for long, and must not connect a server
// (as a request through Handle may): the engine handles the server's
// further changes on the same goroutine, after f returns.
func (e *Engine) Subscribe(f func(ctx context.Context, ev Event)) (cancel func()) {
	return e.core.Subscribe(func(ctx context.Context, ev gateway.Event) {
		kind, ok := eventKinds[ev.Kind]
		if !ok {
			return // a kind not part of the library yet
		}
		f(ctx, Event{Kind: kind, Server: ev.Server, Status: ev.Status})
	})
}

var eventKinds = map[gateway.EventKind]EventKind{
	gateway.EventState: ServerState,
	gateway.EventLists: ServerLists,
}

// IndexResult reports the indexing of one server.
type IndexResult struct {
	Server    string        `json:"server"`
	Tools     int           `json:"tools"`
	Resources int           `json:"resources"`
	Templates int           `json:"templates"` // resource templates
	Prompts   int           `json:"prompts"`
	Duration  time.Duration `json:"durationNs"`
	Error     string        `json:"error,omitempty"`

	// With settings.embeddings: how many tool texts were embedded now
	// (texts embedded before are not counted), or why embedding failed.
	// A server whose embedding failed is indexed all the same; search
	// stays lexical until its tools have vectors.
	Embedded        int    `json:"embedded,omitempty"`
	EmbeddingsError string `json:"embeddingsError,omitempty"`
}

// IndexOptions tune Index. The zero value works.
type IndexOptions struct {
	// Started, if set, is called as a server's indexing starts, and Done as
	// it ends; calls are never concurrent. Servers waiting for their turn
	// when ctx ends are reported to neither.
	Started func(server string)
	Done    func(IndexResult)
}

// Index connects to each named server (all usable ones when names is
// empty), lists everything it offers and stores it in the catalog, even
// when the catalog already has it, with at most Options.IndexConcurrency
// servers at once. With settings.embeddings it then embeds the texts of
// the server's tools that have no vector yet. A failing server does not
// stop the rest; an unknown or unusable name is an error before anything
// starts. The results are in the order of names.
func (e *Engine) Index(ctx context.Context, names []string, opts *IndexOptions) ([]IndexResult, error) {
	var o gateway.IndexOptions
	if opts != nil {
		o.Started = opts.Started
		if opts.Done != nil {
			o.Done = func(r gateway.IndexResult) { opts.Done(indexResult(r)) }
		}
	}
	rs, err := e.core.Index(ctx, names, &o)
	out := make([]IndexResult, len(rs))
	for i, r := range rs {
		out[i] = indexResult(r)
	}
	return out, err
}

// Prune removes from the catalog every server that is no longer
// configured or whose definition changed since it was indexed, and the
// embeddings that no stored tool needs (all of them without
// settings.embeddings), and returns the names of the servers removed: a
// host that indexes ahead of time (Index) prunes after, so that the
// catalog holds only what the configuration still names. A configuration
// that failed closed prunes nothing: it may have meant to keep every
// server.
func (e *Engine) Prune(ctx context.Context) (removed []string, err error) {
	return e.core.Prune(ctx)
}

func indexResult(r gateway.IndexResult) IndexResult {
	return IndexResult{Server: r.Server, Tools: r.Tools, Resources: r.Resources, Templates: r.Templates, Prompts: r.Prompts,
		Duration: r.Duration, Error: r.Error, Embedded: r.Embedded, EmbeddingsError: r.EmbeddingsError}
}

// Package front serves a Switchboard engine as an MCP server, over stdio or
// Streamable HTTP.
//
// A client sees the mcp proxy tool, plus the direct tools the configuration
// asks for, named by settings.toolPrefix. With exactly one usable server and
// toolPrefix "none" the gateway is transparent: that server's tools,
// resources, resource templates, prompts and completions pass through under
// their own names, and there is no proxy tool.
//
// Every client session has its own engine session (resource references are
// kept apart), while all sessions share the engine's upstream connections:
// one child process per stdio server, however many agents are connected.
package front

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
)

// Options configures a Server. The zero value works.
type Options struct {
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
	// Version is reported to clients. Default "dev".
	Version string
	// Bridge routes server-to-client traffic of upstream servers to the
	// client sessions that caused it. It must be the bridge whose
	// ClientOptions the engine was made with; nil disables pass-through.
	Bridge *Bridge
	// Metrics, if set, counts calls and their latency.
	Metrics *Metrics
	// ForwardRoots passes the client's roots on to the engine's servers
	// (Engine.SetRoots). Set it where the engine's connections serve one
	// client, as serve over stdio does; with several, the last to list its
	// roots wins. Over HTTP, where clients share the connections, leave it
	// off: one client's roots would widen or narrow what a server lets the
	// others reach.
	ForwardRoots bool
}

// Server is the MCP server in front of an engine.
type Server struct {
	eng    *switchboard.Engine
	opts   Options
	log    *slog.Logger
	mcp    *mcp.Server
	prefix string // settings.toolPrefix
	single string // the one server of transparent mode, or ""

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*clientSession
	direct   map[string]directTool // exposed name → tool
	mirrored mirrored              // transparent mode's registrations
	level    mcp.LoggingLevel      // asked of the server in transparent mode
	unsub    func()

	ctx     context.Context // cancelled by Close; bounds background work
	cancel  context.CancelFunc
	wg      sync.WaitGroup // listings of client roots
	rootsMu sync.Mutex     // one listing of client roots at a time
}

type directTool struct {
	server, name string
}

// New makes the MCP server for eng. In transparent mode, and when direct
// tools are configured, it lists the servers concerned first, which
// connects them.
func New(ctx context.Context, eng *switchboard.Engine, opts *Options) (*Server, error) {
	s := &Server{eng: eng, sessions: map[*mcp.ServerSession]*clientSession{}, direct: map[string]directTool{}}
	if opts != nil {
		s.opts = *opts
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	cfg := eng.Config()
	s.prefix = cfg.Settings.ToolPrefix
	if usable := eng.Usable(); len(usable) == 1 && s.prefix == "none" {
		s.single = usable[0]
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "switchboard", Version: s.opts.Version}, s.serverOptions())
	s.opts.Bridge.attach(s.mcp)
	if s.opts.ForwardRoots {
		s.mcp.AddReceivingMiddleware(s.awaitRoots)
	}
	if s.single != "" {
		s.mcp.AddReceivingMiddleware(s.logLevels)
		if err := s.mirror(ctx); err != nil {
			return nil, err
		}
	} else {
		if err := s.addProxyTool(ctx); err != nil {
			return nil, err
		}
		s.syncDirect(ctx)
	}
	s.unsub = eng.Subscribe(func(st switchboard.ServerStatus) { s.changed(st.Name) })
	return s, nil
}

func (s *Server) serverOptions() *mcp.ServerOptions {
	o := &mcp.ServerOptions{
		Logger:       s.log,
		Instructions: "Switchboard: one gateway to many MCP servers. Use the mcp tool: search for a tool by need, describe it, then call it.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	}
	if s.opts.ForwardRoots {
		o.InitializedHandler = s.rootsInitialized
		o.RootsListChangedHandler = s.rootsChanged
	}
	if s.single != "" {
		o.Instructions = ""
		o.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return s.eng.Complete(ctx, s.single, req.Params)
		}
		o.SubscribeHandler = s.subscribe
		o.UnsubscribeHandler = s.unsubscribe
	}
	return o
}

// MCP returns the go-sdk server, to serve over any transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close stops following the engine's changes and waits for listings of
// client roots under way. It does not close the engine.
func (s *Server) Close() {
	if s.unsub != nil {
		s.unsub()
	}
	s.cancel()
	s.wg.Wait()
}

// clientSession is what the gateway keeps per client session.
type clientSession struct {
	es  *switchboard.Session
	ctx context.Context // cancelled when the client session ends

	// Guarded by Server.mu.
	level      mcp.LoggingLevel // set by logging/setLevel; "" until then
	subs       map[string]bool  // resources subscribed to (transparent mode)
	rootsReady chan struct{}    // closed when its first roots listing ends; nil if none
}

// track returns what the gateway keeps for a client session, making it on
// first use and forgetting it, and what the session asked of upstream
// servers, when the client session ends. s.mu must be held.
func (s *Server) track(ss *mcp.ServerSession) *clientSession {
	cs, ok := s.sessions[ss]
	if ok {
		return cs
	}
	sctx, end := context.WithCancel(context.Background())
	cs = &clientSession{es: s.eng.NewSession(), ctx: sctx}
	s.sessions[ss] = cs
	go func() {
		ss.Wait()
		end()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.forget(cs)
	}()
	return cs
}

// session returns the engine session of a client session and a context
// for one request that also ends with the client session: the SDK does not
// cancel requests in flight when their session is closed.
func (s *Server) session(ctx context.Context, ss *mcp.ServerSession) (*switchboard.Session, context.Context, context.CancelFunc) {
	if ss == nil {
		ctx, cancel := context.WithCancel(ctx)
		return s.eng.NewSession(), ctx, cancel
	}
	s.mu.Lock()
	cs := s.track(ss)
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(cs.ctx, cancel)
	return cs.es, ctx, func() { stop(); cancel() }
}

// addProxyTool registers the mcp tool. The SDK validates its arguments
// against the schema before the handler runs.
func (s *Server) addProxyTool(ctx context.Context) error {
	def := s.eng.Tool(ctx)
	var schema jsonschema.Schema
	if err := json.Unmarshal(def.InputSchema, &schema); err != nil {
		return fmt.Errorf("the proxy tool's schema: %w", err)
	}
	tool := &mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: &schema}
	// The input is taken raw: the engine parses it again with its own
	// clearer errors, so decoding it into a map would be wasted work.
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, any, error) {
		return s.suspendable(ctx, req, func(ctx context.Context) *mcp.CallToolResult {
			done := s.opts.Metrics.start("mcp")
			ctx, _, release := s.opts.Bridge.enter(ctx, req.Session, req.Params.GetProgressToken())
			defer release()
			es, ctx, cancel := s.session(ctx, req.Session)
			defer cancel()
			r := es.Handle(s.approving(ctx, req.Session), args)
			done(r.Details.Server, r.IsError)
			return r.MCP()
		}), nil, nil
	})
	return nil
}

// changed reacts to a server whose lists or state changed.
func (s *Server) changed(server string) {
	ctx := context.Background()
	if s.single != "" {
		if server == s.single {
			if err := s.mirror(ctx); err != nil {
				s.log.Warn("refreshing the mirrored server", "server", server, "err", err)
			}
		}
		return
	}
	s.syncDirect(ctx)
}

// exposedName names a server's tool as a direct tool.
func (s *Server) exposedName(server, tool string) string {
	switch s.prefix {
	case "none":
		return tool
	case "short":
		return strings.TrimSuffix(strings.TrimSuffix(server, "-mcp"), "_mcp") + "_" + tool
	}
	return server + "_" + tool
}

// syncDirect makes the direct tools match the configuration and what the
// catalog knows; the SDK sends tools/list_changed when they change.
func (s *Server) syncDirect(ctx context.Context) {
	want := map[string]directTool{}
	tools := map[string]*mcp.Tool{}
	cfg := s.eng.Config()
	for _, name := range s.eng.Usable() {
		srv, _ := cfg.Server(name)
		if !srv.DirectTools.Set() {
			continue
		}
		ent, ok := s.eng.Cached(ctx, name)
		if !ok {
			var err error
			if ent, err = s.eng.Entry(ctx, name); err != nil {
				s.log.Warn("listing a server for its direct tools", "server", name, "err", err)
				continue
			}
		}
		for _, t := range ent.Tools {
			if srv.Direct(t.Name) {
				exposed := s.exposedName(name, t.Name)
				if exposed == switchboard.ToolName {
					continue
				}
				want[exposed] = directTool{server: name, name: t.Name}
				tools[exposed] = t
			}
		}
	}
	s.mu.Lock()
	var remove []string
	for name := range s.direct {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	var add []string
	for name := range want {
		if _, ok := s.direct[name]; !ok {
			add = append(add, name)
		}
	}
	s.direct = want
	s.mu.Unlock()
	if len(remove) > 0 {
		s.mcp.RemoveTools(remove...)
	}
	sort.Strings(add)
	for _, name := range add {
		s.addDirect(name, want[name], tools[name], false)
	}
}

// addDirect registers one server tool under an exposed name. Arguments
// pass through unvalidated: the server validates its own.
//
// The tool's output schema is not advertised. A tool with one must always
// return structured content that conforms to it, and spec-following
// clients check that it does (or show the model the structured content
// instead of the text); but a result over settings.output has its
// structured content spilled to a file, which no schema allows. Without the
// schema, structured content that fits is still passed on, and the text
// holds it too (see Engine.Bound).
func (s *Server) addDirect(exposed string, dt directTool, t *mcp.Tool, transparent bool) {
	cp := *t
	cp.Name = exposed
	cp.OutputSchema = nil
	if cp.InputSchema == nil {
		cp.InputSchema = map[string]any{"type": "object"}
	}
	s.mcp.AddTool(&cp, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.suspendable(ctx, req, func(ctx context.Context) *mcp.CallToolResult {
			return s.callDirect(ctx, req, dt, transparent)
		}), nil
	})
}

// callDirect calls a server's tool for a direct or mirrored tool. Its
// result is bounded (Engine.Bound); in transparent mode, a result that
// fits is passed on as it came (Engine.Fits).
func (s *Server) callDirect(ctx context.Context, req *mcp.CallToolRequest, dt directTool, transparent bool) *mcp.CallToolResult {
	done := s.opts.Metrics.start("call")
	es, ctx, cancel := s.session(ctx, req.Session)
	defer cancel()
	ctx, up, release := s.opts.Bridge.enter(ctx, req.Session, req.Params.GetProgressToken())
	defer release()
	var args any = map[string]any{}
	if len(req.Params.Arguments) > 0 {
		args = req.Params.Arguments
	}
	params := &mcp.CallToolParams{Meta: req.Params.Meta, Name: dt.name, Arguments: args}
	if up != "" {
		params.Meta = copyMeta(req.Params.Meta)
		params.SetProgressToken(up)
	}
	res, err := es.CallTool(s.approving(ctx, req.Session), dt.server, params)
	if err != nil {
		done(dt.server, true)
		return errorResult(err)
	}
	if !transparent || !s.eng.Fits(res) {
		if res, err = s.eng.Bound("call-"+dt.name, res); err != nil {
			done(dt.server, true)
			return errorResult(err)
		}
	}
	done(dt.server, res.IsError)
	return res
}

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}

func copyMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

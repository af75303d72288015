// Package front serves a Switchboard engine as an MCP server, over stdio or
// Streamable HTTP.
//
// A client sees the mcp proxy tool, plus the direct tools the configuration
// asks for, named by settings.toolPrefix. With exactly one usable server and
// toolPrefix "none" the gateway is transparent: that server's tools,
// resources, resource templates, prompts and completions pass through under
// their own names, and there is no proxy tool.
//
// New makes the engine and the server in front of it together, so that
// what upstream servers send toward a client (progress, sampling,
// elicitation, log messages, login prompts) reaches the client session
// whose call caused it. Every client session has its own engine session
// (resource references are kept apart), while all sessions share the
// engine's upstream connections: one child process per stdio server,
// however many agents are connected. Close ends it all.
package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/lifecycle"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Options configures a Server. The zero value works.
type Options struct {
	// Engine configures the engine the server runs. Its Client must be
	// nil: the server passes what upstream servers send toward a client
	// (progress, sampling, elicitation, log messages, resource updates) to
	// the client session whose call caused it. Its ClientMiddleware runs
	// after the server's own. Its Prompt, if set, is how a user logs in
	// when no client can open the authorization URL (see docs/serve.md).
	Engine switchboard.Options
	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger
	// Version is reported to clients. Default "dev".
	Version string
	// Metrics, if set, counts calls and their latency, and reports the
	// states of the engine's servers.
	Metrics *Metrics
	// ForwardRoots passes the client's roots on to the engine, which
	// offers them only to the servers whose configuration accepts them
	// (roots: ["client"]); with no such server, the client's roots are not
	// even listed. Set it where the engine's connections serve one client,
	// as serve over stdio does; with several, the last to list its roots
	// wins. Over HTTP, where clients share the connections, leave it off:
	// one client's roots would widen or narrow what a server lets the
	// others reach.
	ForwardRoots bool
	// ReplicaID names this server among the replicas behind one load
	// balancer (letters, digits, '-' and '_', at most 63). It is carried in
	// the requestState of each suspended multi round-trip call, so that
	// another replica can send the continuation here
	// (HTTPOptions.Registry). Default: random.
	ReplicaID string
	// Changed, if set, is called after the server has handled a change
	// of one of the engine's servers (it connected or failed, or its lists
	// were stored in the catalog), on the engine's goroutine: the work
	// behind such a change is done once, not for every call, and serve
	// gives back its binary's pages after it. It must not block.
	Changed func()
}

// Server is the MCP server in front of an engine of its own.
type Server struct {
	eng    *gateway.Engine
	cfg    *config.Config // the configuration eng runs
	bridge *bridge
	opts   Options
	log    *slog.Logger
	mcp    *mcp.Server
	prefix string // settings.toolPrefix
	single string // the one server of transparent mode, or ""

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*clientSession
	direct   map[string]directTool      // exposed name → tool
	apps     map[string]appResource     // UI resources offered, by the URI offered (apps.go)
	prompts  map[string]offeredPrompt   // proxy mode: exposed name → a server's prompt
	shown    map[string]map[string]bool // directTools "search": server → tools a search or describe showed
	mirrored mirrored                   // transparent mode's registrations
	plain    map[string]bool            // mirrored tools the fast lane may call: no output schema
	level    mcp.LoggingLevel           // asked of the server in transparent mode
	unsub    func()

	bg      *lifecycle.Group // session watchers, suspended calls, listings of client roots
	ctx     context.Context  // bg's: cancelled by Close; bounds background work
	rootsMu sync.Mutex       // one listing of client roots at a time

	drain     drainState
	tasks     taskTable                         // the clients' tasks (tasks.go)
	lane      atomic.Pointer[fastLane]          // set when served over HTTP (unless HTTPOptions.NoFastLane)
	ident     atomic.Pointer[identity.Verifier] // HTTPOptions.Identity, set by Handler
	idle      atomic.Int64                      // HTTPOptions.IdleTimeout, set by Handler for Serve
	proxyName string                            // the proxy tool's, for the lane; set once by addProxyTool (proxy mode)
	script    bool                              // the script tool is offered (settings.scriptMode); set once by expose

	closeOnce sync.Once
	closeErr  error
}

type directTool struct {
	server, name string
	plain        bool      // no output schema upstream: the fast lane may call it (laneTool)
	def          *mcp.Tool // the definition registered, for syncDirect
	app          bool      // registered only because it has a UI (apps.go)
	appOnly      bool      // its visibility leaves out the model: not in tools/list
}

// New makes the engine over cfg and the MCP server in front of it. In
// transparent mode, and when direct tools are configured, it lists the
// servers concerned first, which connects them. Close the server when
// done: that closes the engine too.
func New(ctx context.Context, cfg *config.Config, opts *Options) (*Server, error) {
	s := &Server{sessions: map[*mcp.ServerSession]*clientSession{}, direct: map[string]directTool{}, bridge: newBridge()}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.ReplicaID == "" {
		s.opts.ReplicaID = NewReplicaID()
	}
	s.opts.ForwardRoots = s.opts.ForwardRoots && acceptsClientRoots(cfg)
	if err := CheckReplicaID(s.opts.ReplicaID); err != nil {
		return nil, err
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.bridge.replica = s.opts.ReplicaID
	s.bridge.log = s.log
	s.drain.init()
	s.bridge.changed = s.drain.changed
	eng, err := s.newEngine(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.eng, s.cfg = eng, cfg
	s.bg = lifecycle.New()
	s.ctx = s.bg.Context()
	// What the front logs and traces is cleaned of the engine's secrets,
	// as the engine's own is.
	s.log = slog.New(redact.Handler(eng.Redact(), s.log.Handler()))
	s.bridge.log = s.log
	s.opts.Engine.Telemetry = eng.Tracer()
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	s.opts.Metrics.attach(eng)
	s.prefix = cfg.Settings.ToolPrefix
	if usable := eng.Usable(); len(usable) == 1 && s.prefix == "none" {
		if srv, _ := cfg.Server(usable[0]); srv.ToolPrefix == "" || srv.ToolPrefix == "none" {
			s.single = usable[0]
		}
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "switchboard", Version: s.opts.Version}, s.serverOptions())
	s.bridge.attach(s.mcp)
	s.mcp.AddReceivingMiddleware(s.identify, s.grantsFilter, s.haltable, s.revisionFields)
	if s.opts.ForwardRoots {
		s.mcp.AddReceivingMiddleware(s.awaitRoots)
	}
	if err := s.expose(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.unsub = eng.Subscribe(s.changed)
	return s, nil
}

// newEngine makes the engine, its upstream traffic routed through the
// server's bridge.
func (s *Server) newEngine(ctx context.Context, cfg *config.Config) (*gateway.Engine, error) {
	o := s.opts.Engine
	if o.Client != nil {
		return nil, errors.New("front.Options.Engine.Client must be nil: the server sets the client options of upstream connections itself")
	}
	o.Client = s.bridge.clientOptions()
	// serve relays MCP Apps (apps.go): its upstream connections claim
	// the extension, as hosts that render apps do.
	o.Client.Capabilities = &mcp.ClientCapabilities{}
	o.Client.Capabilities.AddExtension(uiExtension, uiCapability())
	o.ClientMiddleware = append([]mcp.Middleware{s.bridge.clientMiddleware()}, o.ClientMiddleware...)
	o.Prompt = s.bridge.prompter(o.Prompt)
	return gateway.New(ctx, cfg, (*gateway.Options)(&o))
}

// expose registers what clients see: the single server's own tools,
// resources and prompts in transparent mode, else the proxy tool and the
// direct tools.
func (s *Server) expose(ctx context.Context) error {
	if s.single != "" {
		s.mcp.AddReceivingMiddleware(s.logLevels)
		return s.mirror(ctx, true)
	}
	s.mcp.AddReceivingMiddleware(s.appsFilter, s.appAlias)
	if err := s.addProxyTool(ctx); err != nil {
		return err
	}
	if s.cfg.Settings.ScriptMode {
		if err := s.addScriptTool(); err != nil {
			return err
		}
		s.script = true
	}
	s.syncDirect(ctx, true)
	s.syncPrompts(ctx)
	return nil
}

func (s *Server) serverOptions() *mcp.ServerOptions {
	o := &mcp.ServerOptions{
		Logger:       s.log,
		Instructions: "Switchboard: one gateway to many MCP servers. Use the mcp tool: search for a tool by need, describe it, then call it.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	}
	o.InitializedHandler = s.initialized
	if s.opts.ForwardRoots {
		o.RootsListChangedHandler = s.rootsChanged
	}
	if s.single == "" {
		// The servers' prompts (prompts.go): there may be none yet, and
		// the client is told when there are.
		o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		// The UI resources of MCP Apps (apps.go), which come and go with
		// the tools.
		o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true}
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

// initialized learns of a client session that has finished its handshake.
func (s *Server) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	if s.opts.ForwardRoots {
		s.rootsInitialized(ctx, req) // first: the lane's calls wait for the roots too
	}
	if l := s.lane.Load(); l != nil && !l.stateless && !statelessRequest(ctx) {
		s.laneAdd(l, req.Session)
	}
	// Serving with identity, the session is its user's since initialize
	// (identify).
}

// laneAdd makes a client session known to the fast lane.
func (s *Server) laneAdd(l *fastLane, ss *mcp.ServerSession) {
	s.mu.Lock()
	cs := s.track(ss)
	s.mu.Unlock()
	l.add(ss, cs.ctx)
}

// laneTool returns the tool a call of name reaches, and whether the fast
// lane may call it: a mirrored tool (transparent mode) or a direct tool,
// either without an output schema upstream (go-sdk's client checks a
// result against it; the lane would not).
func (s *Server) laneTool(name string) (directTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.single != "" {
		return directTool{server: s.single, name: name}, s.plain[name]
	}
	dt, ok := s.direct[name]
	return dt, ok && dt.plain
}

// MCP returns the go-sdk server, to serve over any transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close ends the client sessions, cancels the calls still running for
// them (suspended multi round-trip calls among them) and waits for every
// goroutine the server started, then closes the engine. It is idempotent
// and safe to call concurrently.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.unsub != nil {
			s.unsub()
		}
		s.bg.Stop()
		s.mu.Lock()
		sessions := make([]*mcp.ServerSession, 0, len(s.sessions))
		for ss := range s.sessions {
			sessions = append(sessions, ss)
		}
		s.mu.Unlock()
		for _, ss := range sessions {
			ss.Close()
		}
		s.bridge.stop()
		s.bg.Wait()
		s.closeErr = s.eng.Close()
	})
	return s.closeErr
}

// clientSession is what the gateway keeps per client session.
type clientSession struct {
	es  *gateway.Session
	ctx context.Context // cancelled when the client session ends

	// Guarded by Server.mu.
	level      mcp.LoggingLevel // set by logging/setLevel; "" until then
	subs       map[string]bool  // resources subscribed to (transparent mode)
	rootsReady chan struct{}    // closed when its first roots listing ends; nil if none
	trace      *traceFile       // settings.trace; opened on first use
	user       *identity.User   // the session's user, serving with identity (bindUser)
}

// track returns what the gateway keeps for a client session, making it on
// first use and forgetting it, and what the session asked of upstream
// servers, when the client session ends (or the server closes, which
// ends it). s.mu must be held.
func (s *Server) track(ss *mcp.ServerSession) *clientSession {
	cs, ok := s.sessions[ss]
	if ok {
		return cs
	}
	sctx, end := context.WithCancel(s.ctx)
	// Serving with identity, a session is its user's (bindUser); until a
	// request names them, it may use nothing once rules exist.
	cs = &clientSession{es: s.newSession(context.Background(), nil), ctx: sctx}
	watching := s.bg.Go(func() {
		ss.Wait()
		s.tasks.forget(ss) // first: a task that ends with end() is gone by then
		end()
		s.mu.Lock()
		delete(s.sessions, ss)
		tf := cs.trace
		s.mu.Unlock()
		tf.close()
		if l := s.lane.Load(); l != nil {
			l.remove(ss.ID())
		}
		s.bridge.forgetSession(ss)
		s.forget(cs)
	})
	if !watching {
		end() // closed: the session's calls end at once
		return cs
	}
	s.sessions[ss] = cs
	return cs
}

// session returns the engine session of a client session and a context
// for one call that also ends with the client session: the SDK does not
// cancel requests in flight when their session is closed. When cancel is
// set, it cancels ctx, and the context is ctx itself; else it is one of
// its own. The function returned ends what session began.
//
// A stateless request's session ends with the request, while a multi
// round-trip call it began may go on: such a call gets an engine session
// of its own, as a call without a session does.
func (s *Server) session(ctx context.Context, ss *mcp.ServerSession, cancel context.CancelFunc) (*gateway.Session, context.Context, func()) {
	if ss == nil || statelessRequest(ctx) {
		if cancel != nil {
			return s.newSession(ctx, ss), ctx, func() {}
		}
		ctx, cancel := context.WithCancel(ctx)
		return s.newSession(ctx, ss), ctx, cancel
	}
	cs := s.trackBound(ctx, ss)
	if cancel != nil {
		stop := context.AfterFunc(cs.ctx, cancel)
		return cs.es, ctx, func() { stop() }
	}
	ctx, cancel = context.WithCancel(ctx)
	stop := context.AfterFunc(cs.ctx, cancel)
	return cs.es, ctx, func() { stop(); cancel() }
}

// addProxyTool registers the mcp tool. Its arguments go to the engine as
// the client wrote them, on every path (go-sdk's and the lane's): the
// engine's parser (proxy.Parse) is the one judge of them, on every face
// (serve, the library, the CLI), with errors that say what to write.
// go-sdk's own check against the schema (mcp.AddTool's) would refuse less
// clearly what Parse refuses anyway (TestParseRefusesWhatSchemaRefuses),
// and decode and encode them again on the way.
func (s *Server) addProxyTool(ctx context.Context) error {
	def := s.eng.Tool(ctx)
	var schema jsonschema.Schema
	if err := json.Unmarshal(def.InputSchema, &schema); err != nil {
		return fmt.Errorf("the proxy tool's schema: %w", err)
	}
	tool := &mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: &schema}
	s.proxyName = def.Name
	s.mcp.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.suspendable(ctx, req, func(ctx context.Context) *mcp.CallToolResult {
			tc := sdkCall(req, req.Params.Arguments)
			return s.callProxy(ctx, &tc)
		}), nil
	})
	return nil
}

// changed reacts to a change of a server's state or lists, from the
// catalog: it connects nothing.
func (s *Server) changed(ctx context.Context, ev gateway.Event) {
	if s.opts.Changed != nil {
		defer s.opts.Changed()
	}
	if s.single != "" {
		if ev.Server == s.single {
			if err := s.mirror(ctx, false); err != nil {
				s.log.Warn("refreshing the mirrored server", "server", ev.Server, "err", err)
			}
		}
		return
	}
	if !s.cfg.Settings.FreezeDirectTools {
		s.syncDirect(ctx, false)
	}
	s.syncPrompts(ctx)
}

// exposedName names a server's tool as a direct tool (and its prompts):
// by the server's own toolPrefix, else settings.toolPrefix.
func (s *Server) exposedName(server, tool string) string {
	prefix := s.prefix
	if srv, ok := s.eng.Config().Server(server); ok && srv.ToolPrefix != "" {
		prefix = srv.ToolPrefix
	}
	switch prefix {
	case "none":
		return tool
	case "short":
		return strings.TrimSuffix(strings.TrimSuffix(server, "-mcp"), "_mcp") + "_" + tool
	case "mcp":
		return "mcp__" + server + "__" + tool
	}
	return server + "_" + tool
}

// syncDirect makes the direct tools match the configuration and what the
// catalog knows; the SDK sends tools/list_changed when they change. With
// connect, a server the catalog does not know is connected and listed.
func (s *Server) syncDirect(ctx context.Context, connect bool) {
	want := map[string]directTool{}
	tools := map[string]*mcp.Tool{}
	apps := map[string]appResource{}
	cfg := s.eng.Config()
	appTools := !cfg.Settings.NoAppTools
	for _, name := range s.eng.Usable() {
		srv, _ := cfg.Server(name)
		if !srv.DirectTools.Set() && !appTools {
			continue
		}
		ent, ok := s.eng.Cached(ctx, name)
		if !ok && (!connect || srv.DirectTools.OnDemand || !srv.DirectTools.Set()) {
			// An on-demand server's tools come when they are shown; a
			// server's app tools once the catalog knows it.
			continue
		}
		if !ok {
			var err error
			if ent, err = s.eng.Entry(ctx, name); err != nil {
				s.log.Warn("listing a server for its direct tools", "server", name, "err", err)
				continue
			}
		}
		for _, t := range ent.Tools {
			direct := srv.Direct(t.Name) || srv.DirectTools.OnDemand && s.wasShown(name, t.Name)
			uri, appOnly := appUI(t)
			if !direct && (uri == "" || !appTools) {
				continue
			}
			exposed := s.exposedName(name, t.Name)
			if exposed == proxy.ToolName {
				continue
			}
			def := t
			if uri != "" {
				def = withAppURI(t, name, uri)
				apps[appURI(name, uri)] = appResource{server: name, uri: uri}
			}
			want[exposed] = directTool{server: name, name: t.Name, plain: t.OutputSchema == nil, def: def, app: !direct, appOnly: appOnly}
			tools[exposed] = def
		}
	}
	s.syncApps(apps)
	s.mu.Lock()
	var remove []string
	for name := range s.direct {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	// A tool whose definition changed is added again: after a change the
	// user approved, the client learns the new one (and while a tool is
	// quarantined, Entry and Cached give the approved one).
	var add []string
	for name := range want {
		if old, ok := s.direct[name]; !ok || !reflect.DeepEqual(old.def, tools[name]) {
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
		s.addDirect(name, want[name], tools[name])
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
// holds it too (see gateway.Engine.Bound).
func (s *Server) addDirect(exposed string, dt directTool, t *mcp.Tool) {
	cp := *t
	cp.Name = exposed
	cp.OutputSchema = nil
	if cp.InputSchema == nil {
		cp.InputSchema = map[string]any{"type": "object"}
	}
	s.mcp.AddTool(&cp, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.suspendable(ctx, req, func(ctx context.Context) *mcp.CallToolResult {
			tc := sdkCall(req, req.Params.Arguments)
			ans, _ := s.callTool(ctx, &tc, dt) // only the lane's calls are declined
			return ans.res
		}), nil
	})
}

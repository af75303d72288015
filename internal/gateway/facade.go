package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// facade is a checked host.Facade.
type facade struct {
	host.Facade
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	listed   map[string]any // the schema as a server would list it

	mu      sync.Mutex
	checked bool  // against the tool as last listed
	misfit  error // why it does not fit that tool; nil when it does
}

// facades are a host's facades: they are the engine pool's Rewriter
// (upstream.Rewriter).
type facades struct {
	byServer map[string][]*facade
	hidden   map[string]map[string]string // server → normalized tool name → a facade that hides it
	log      *slog.Logger
}

var facadeNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

// newFacades checks each facade against its own schema and the
// configuration, and returns nil for none.
func newFacades(cfg *config.Config, defs []host.Facade) (*facades, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	f := &facades{byServer: map[string][]*facade{}, hidden: map[string]map[string]string{}, log: slog.New(slog.DiscardHandler)}
	for _, d := range defs {
		fc, err := newFacade(d)
		if err != nil {
			return nil, err
		}
		if _, ok := cfg.Server(d.Server); !ok {
			return nil, fmt.Errorf("facade %q: server %q is neither packaged nor configured (configured: %s): fix Facade.Server", d.Name, d.Server, strings.Join(cfg.Names(), ", "))
		}
		for _, other := range f.byServer[d.Server] {
			if other.Name == d.Name {
				return nil, fmt.Errorf("facade %q: the host declares two facades of that name on %q: rename one", d.Name, d.Server)
			}
		}
		f.byServer[d.Server] = append(f.byServer[d.Server], fc)
		if d.Exclusive {
			if f.hidden[d.Server] == nil {
				f.hidden[d.Server] = map[string]string{}
			}
			f.hidden[d.Server][proxy.Normalize(d.Tool)] = d.Name
		}
	}
	for server, fcs := range f.byServer {
		for _, fc := range fcs {
			if by, ok := f.hidden[server][proxy.Normalize(fc.Name)]; ok || f.find(server, fc.Tool) != nil {
				if !ok {
					by = fc.Tool
				}
				return nil, fmt.Errorf("facade %q: calls %q on %q, which is a facade too (or hidden by facade %q): a facade calls a server's own tool", fc.Name, fc.Tool, server, by)
			}
		}
	}
	return f, nil
}

// newFacade checks a facade on its own: its name, description and schema,
// and that its fixed and renamed arguments do not collide.
func newFacade(d host.Facade) (*facade, error) {
	switch {
	case !facadeNameRE().MatchString(d.Name):
		return nil, fmt.Errorf("facade %q: invalid name: use 1 to 128 letters, digits, '_', '-' or '.'", d.Name)
	case strings.TrimSpace(d.Description) == "":
		return nil, fmt.Errorf("facade %q: no description: say what the tool does, for the model that calls it", d.Name)
	case d.Server == "" || d.Tool == "":
		return nil, fmt.Errorf("facade %q: Server and Tool must name the tool it calls", d.Name)
	}
	raw := d.InputSchema
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	d.Fixed, d.Rename = maps.Clone(d.Fixed), maps.Clone(d.Rename) // the host's maps stay the host's
	fc := &facade{Facade: d}
	if err := json.Unmarshal(raw, &fc.schema); err != nil || fc.schema == nil {
		return nil, fmt.Errorf("facade %q: its input schema is not a JSON Schema object: %v: fix Facade.InputSchema", d.Name, err)
	}
	if fc.schema.Type != "object" {
		return nil, fmt.Errorf(`facade %q: its input schema must have "type": "object", not %q: fix Facade.InputSchema`, d.Name, fc.schema.Type)
	}
	var err error
	if fc.resolved, err = fc.schema.Resolve(nil); err != nil {
		return nil, fmt.Errorf("facade %q: its input schema does not resolve: %v: fix Facade.InputSchema", d.Name, err)
	}
	if err := json.Unmarshal(raw, &fc.listed); err != nil {
		return nil, fmt.Errorf("facade %q: its input schema: %v", d.Name, err)
	}
	return fc, fc.checkNames()
}

// checkNames checks that each argument the tool gets comes from one place.
func (fc *facade) checkNames() error {
	for field := range fc.Fixed {
		if _, ok := fc.schema.Properties[field]; ok {
			return fmt.Errorf("facade %q: field %q is both fixed and an argument of the facade: drop it from Facade.Fixed or from the facade's schema", fc.Name, field)
		}
	}
	from := map[string]string{} // tool argument → facade property
	for _, p := range sortedKeys(fc.schema.Properties) {
		to := fc.target(p)
		if _, ok := fc.Fixed[to]; ok {
			return fmt.Errorf("facade %q: field %q is passed as %q, which is fixed: drop it from Facade.Fixed or from Facade.Rename", fc.Name, p, to)
		}
		if other, ok := from[to]; ok {
			return fmt.Errorf("facade %q: fields %q and %q are both passed as %q: fix Facade.Rename", fc.Name, other, p, to)
		}
		from[to] = p
	}
	for p := range fc.Rename {
		if _, ok := fc.schema.Properties[p]; !ok {
			return fmt.Errorf("facade %q: Facade.Rename renames %q, which the facade's schema does not have (its fields: %s): fix Facade.Rename", fc.Name, p, list(sortedKeys(fc.schema.Properties)))
		}
	}
	return nil
}

// target is the name of the tool's argument a facade property is passed as.
func (fc *facade) target(p string) string {
	if to, ok := fc.Rename[p]; ok && to != "" {
		return to
	}
	return p
}

// find returns the facade named name on server, or nil.
func (f *facades) find(server, name string) *facade {
	for _, fc := range f.byServer[server] {
		if fc.Name == name {
			return fc
		}
	}
	return nil
}

// checkAll checks every facade of server against its listed tools, and
// returns the first misfit.
func (f *facades) checkAll(server string, tools []*mcp.Tool) error {
	for _, fc := range f.byServer[server] {
		if err := fc.fit(tools); err != nil {
			return err
		}
	}
	return nil
}

// annotate gives the definitions of the servers that have facades a
// revision that changes with their facades, so that the catalog lists them
// anew, and makes the direct facades direct tools.
func (f *facades) annotate(cfg *config.Config) {
	if f == nil {
		return
	}
	for i, s := range cfg.Servers {
		fcs := f.byServer[s.Name]
		if len(fcs) == 0 {
			continue
		}
		cp := *s
		defs := make([]host.Facade, len(fcs))
		for j, fc := range fcs {
			defs[j] = fc.Facade
			if fc.Direct && !cp.DirectTools.All {
				cp.DirectTools.Names = append(slices.Clip(cp.DirectTools.Names), fc.Name)
			}
		}
		cp.Revision = digest([]any{s.Revision, defs})
		cfg.Servers[i] = &cp
	}
}

// Tools implements upstream.Rewriter: a server's facades that fit its
// tools join them, and the tools that exclusive facades hide leave.
func (f *facades) Tools(server string, listed []*mcp.Tool) []*mcp.Tool {
	fcs := f.byServer[server]
	if len(fcs) == 0 {
		return listed
	}
	out := make([]*mcp.Tool, 0, len(listed)+len(fcs))
	for _, t := range listed {
		if _, hidden := f.hidden[server][proxy.Normalize(t.Name)]; !hidden {
			out = append(out, t)
		}
	}
	for _, fc := range fcs {
		err := fc.fit(listed)
		fc.mu.Lock()
		fc.checked, fc.misfit = true, err
		fc.mu.Unlock()
		if err != nil {
			f.log.Warn("leaving out a facade that does not fit its tool", "server", server, "facade", fc.Name, "err", err)
			continue
		}
		out = append(out, fc.tool(listed))
	}
	return out
}

// tool is the facade as a server's tool: the tool's annotations and output
// schema are the facade's too, since its results are the tool's.
func (fc *facade) tool(listed []*mcp.Tool) *mcp.Tool {
	t := &mcp.Tool{Name: fc.Name, Description: fc.Description, InputSchema: fc.listed}
	if up := lookupTool(listed, fc.Tool); up != nil {
		t.Annotations, t.OutputSchema = up.Annotations, up.OutputSchema
	}
	return t
}

// Call implements upstream.Rewriter: a call of a facade checks its
// arguments against the facade's schema and sends the tool a call with the
// fixed and passed arguments; a call of a hidden tool is refused.
func (f *facades) Call(ctx context.Context, c *upstream.ToolCall) (*mcp.CallToolResult, error) {
	if fc := f.find(c.Server, c.Params.Name); fc != nil {
		return fc.call(ctx, c)
	}
	if by, ok := f.hidden[c.Server][proxy.Normalize(c.Params.Name)]; ok {
		return nil, fmt.Errorf("the tool is reachable only through the facade %q (hint: call %q)", by, by)
	}
	return c.Send(ctx, c.Params)
}

func (fc *facade) call(ctx context.Context, c *upstream.ToolCall) (*mcp.CallToolResult, error) {
	// Listing checks the facade against the tool of this connection; the
	// list is cached, so this costs nothing after the first call.
	if _, err := c.Tools(ctx); err != nil {
		return nil, err
	}
	fc.mu.Lock()
	checked, misfit := fc.checked, fc.misfit
	fc.mu.Unlock()
	switch {
	case misfit != nil:
		return nil, fmt.Errorf("the facade is unavailable: %w", misfit)
	case !checked:
		return nil, fmt.Errorf("the facade %q was not checked against %q: this is a bug", fc.Name, fc.Tool)
	}
	args, check, err := argsMaps(c.Params.Arguments)
	if err == nil {
		err = fc.validate(check)
	}
	if err != nil {
		res := &mcp.CallToolResult{}
		res.SetError(fmt.Errorf("invalid arguments for %q: %w", fc.Name, err))
		return res, nil
	}
	up := make(map[string]any, len(args)+len(fc.Fixed))
	for k, v := range args {
		up[fc.target(k)] = v
	}
	for k, v := range fc.Fixed {
		up[k] = v
	}
	cp := *c.Params
	cp.Name, cp.Arguments = fc.Tool, up
	return c.Send(ctx, &cp)
}

// validate checks a call's arguments against the facade's schema; an
// argument it does not name is an error too, since it would go nowhere.
func (fc *facade) validate(args map[string]any) error {
	for k := range args {
		if _, ok := fc.schema.Properties[k]; !ok {
			return fmt.Errorf("no argument %q (arguments: %s)", k, list(sortedKeys(fc.schema.Properties)))
		}
	}
	return fc.resolved.Validate(args)
}

// argsMaps returns a call's arguments twice: to pass on, with numbers as
// they were written (an ID of 20 digits stays exact), and to validate, with
// numbers as float64, which the validator understands. Nil is no arguments.
func argsMaps(v any) (pass, check map[string]any, err error) {
	if v == nil {
		return map[string]any{}, map[string]any{}, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&pass); err != nil || pass == nil {
		return nil, nil, errors.New("the arguments are not a JSON object")
	}
	if err := json.Unmarshal(data, &check); err != nil {
		return nil, nil, err
	}
	return pass, check, nil
}

func lookupTool(tools []*mcp.Tool, name string) *mcp.Tool {
	for _, t := range tools {
		if t != nil && t.Name == name {
			return t
		}
	}
	return nil
}

// list joins names for a message, or says there are none.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

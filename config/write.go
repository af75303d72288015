package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// Scope selects which of our own files a write changes.
type Scope string

// Scopes.
const (
	ScopeGlobal  Scope = "global"  // $XDG_CONFIG_HOME/switchboard/config.json
	ScopeProject Scope = "project" // <project>/.switchboard/config.json
)

// File returns the path of our file for the scope.
func (d Dirs) File(scope Scope) (string, error) {
	if scope == ScopeProject {
		if d.Project == "" {
			return "", errors.New("no project directory (hint: run in the project, or use --global)")
		}
		return d.ProjectFile(), nil
	}
	return d.UserFile(), nil
}

// Definition is a server definition to write, in the field order people
// expect to read. Values that refer to secrets are written as references.
type Definition struct {
	Type             string               `json:"type,omitempty"`
	Command          string               `json:"command,omitempty"`
	Args             []string             `json:"args,omitempty"`
	Cwd              string               `json:"cwd,omitempty"`
	Env              map[string]string    `json:"env,omitempty"`
	URL              string               `json:"url,omitempty"`
	Socket           string               `json:"socket,omitempty"`
	Headers          map[string]string    `json:"headers,omitempty"`
	Redirects        string               `json:"redirects,omitempty"`
	PerUser          *bool                `json:"perUser,omitempty"`
	Lifecycle        string               `json:"lifecycle,omitempty"`
	IdleTimeout      *int                 `json:"idleTimeout,omitempty"`
	RequestTimeoutMs *int                 `json:"requestTimeoutMs,omitempty"`
	Reconnect        *ReconnectDefinition `json:"reconnect,omitempty"`
	Disabled         bool                 `json:"disabled,omitempty"`
	IncludeTools     []string             `json:"includeTools,omitempty"`
	ExcludeTools     []string             `json:"excludeTools,omitempty"`
	DirectTools      any                  `json:"directTools,omitempty"` // nil, a bool, "search" or a list of tool names
	ToolPrefix       string               `json:"toolPrefix,omitempty"`
	SearchKeywords   map[string][]string  `json:"searchKeywords,omitempty"`
	ProtocolVersion  string               `json:"protocolVersion,omitempty"`
	OAuth            any                  `json:"oauth,omitempty"` // nil, false or an *OAuthDefinition
	Roots            any                  `json:"roots,omitempty"` // nil, or the roots list as written ([] offers none)
}

// ReconnectDefinition is the reconnect object of a Definition.
type ReconnectDefinition struct {
	Automatic   bool `json:"automatic,omitempty"`
	MaxAttempts int  `json:"maxAttempts,omitempty"`
	BaseDelayMs int  `json:"baseDelayMs,omitempty"`
}

// Definition returns what to write to reproduce s in one of our files.
// Defaults are left out; references stay references.
func (s *Server) Definition() Definition {
	def := Definition{
		Command: s.Command, Args: s.Args, Cwd: s.Cwd, Env: s.Env, URL: s.URL, Socket: s.Socket, Headers: s.Headers, Redirects: string(s.Redirects), PerUser: s.PerUser,
		Disabled: s.Disabled, IncludeTools: s.IncludeTools, ExcludeTools: s.ExcludeTools,
		SearchKeywords: s.SearchKeywords, OAuth: s.OAuth.definition(), ToolPrefix: s.ToolPrefix,
	}
	if s.Type == TransportSSE || s.Type == TransportHTTP && !s.TypeInferred {
		// A written "http" stays written: without it, a server that
		// rejects Streamable HTTP would be tried over SSE.
		def.Type = string(s.Type)
	}
	if s.Lifecycle != LifecycleLazy {
		def.Lifecycle = string(s.Lifecycle)
	}
	if s.ProtocolVersion != "auto" {
		def.ProtocolVersion = s.ProtocolVersion
	}
	if s.RequestTimeout > 0 && s.RequestTimeout != DefaultRequestTimeout {
		ms := int(s.RequestTimeout / time.Millisecond)
		def.RequestTimeoutMs = &ms
	}
	if s.idleSet {
		m := int(s.IdleTimeout / time.Minute)
		def.IdleTimeout = &m
	}
	if s.Reconnect != (Reconnect{}) {
		def.Reconnect = &ReconnectDefinition{Automatic: s.Reconnect.Automatic, MaxAttempts: s.Reconnect.MaxAttempts,
			BaseDelayMs: int(s.Reconnect.BaseDelay / time.Millisecond)}
	}
	if s.rootsSet && s.Roots != nil {
		def.Roots = s.Roots.definition()
	}
	if s.directSet {
		def.DirectTools = s.DirectTools.All
		if s.DirectTools.Names != nil {
			def.DirectTools = s.DirectTools.Names
		}
		if s.DirectTools.OnDemand {
			def.DirectTools = "search"
		}
	}
	return def
}

// ErrNotOurs is matched by the error of a write that would change a file
// that is not Switchboard's own.
var ErrNotOurs = errors.New("not switchboard's file")

// AddServer writes def as server name into our file of the given scope,
// keeping comments and formatting elsewhere in the file. It refuses to
// replace an existing definition unless replace is set, and refuses a
// definition that would not validate; the file is then left untouched.
func AddServer(d Dirs, scope Scope, name string, def Definition, replace bool) (path string, err error) {
	if !ValidName(name) {
		return "", fmt.Errorf("invalid server name %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	return editServers(d, scope, name, func(e serversEdit) error {
		if e.member >= 0 && !replace {
			return fmt.Errorf("server %q is already defined in %s (hint: switchboard remove %s first)", name, e.path, name)
		}
		return e.set(def)
	})
}

// RemoveServer deletes server name from our file of the given scope.
func RemoveServer(d Dirs, scope Scope, name string) (path string, err error) {
	return editServers(d, scope, name, func(e serversEdit) error {
		if e.member < 0 {
			return fmt.Errorf("server %q is not defined in %s", name, e.path)
		}
		jsonc.RemoveMember(e.servers, name)
		return nil
	})
}

// SetDisabled disables or enables server name through our file of the given
// scope. A server defined in a lower file is disabled by adding
// {"disabled": true} to ours; a shared file is never changed.
func SetDisabled(d Dirs, scope Scope, name string, disabled bool) (path string, err error) {
	c := Load(d)
	s, known := c.Server(name)
	if !known {
		return "", fmt.Errorf("%w %q: configured servers are %s", ErrUnknownServer, name, strings.Join(allNames(c), ", "))
	}
	return editServers(d, scope, name, func(e serversEdit) error {
		if e.member < 0 {
			if disabled {
				return e.set(map[string]bool{"disabled": true})
			}
			if !s.Disabled {
				return nil
			}
			// Enabling a definition disabled in a file that is not ours:
			// copy it here without "disabled".
			def := s.Definition()
			def.Disabled = false
			return e.set(def)
		}
		obj, ok := e.servers.Members[e.member].Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("%s: mcpServers.%s is not an object", e.path, name)
		}
		if !disabled && len(obj.Members) == 1 && jsonc.MemberIndex(obj, "disabled") == 0 {
			jsonc.RemoveMember(e.servers, name) // a stub that only disabled a lower definition
			return nil
		}
		if !disabled {
			jsonc.RemoveMember(obj, "disabled")
			return nil
		}
		return jsonc.SetMember(obj, "disabled", true, jsonc.IndentOf(&e.servers.Members[e.member]))
	})
}

func allNames(c *Config) []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.Name)
	}
	return out
}

// serversEdit is what an edit of mcpServers works on.
type serversEdit struct {
	path    string
	name    string
	servers *hujson.Object // the mcpServers object
	indent  string         // indentation of the mcpServers member
	member  int            // index of name in servers, or -1
}

func (e serversEdit) set(val any) error { return jsonc.SetMember(e.servers, e.name, val, e.indent) }

// editServers applies edit to our file of the scope, validates the result
// and writes it atomically; an edit that fails, or a result that would not
// validate, leaves the file as it was.
func editServers(d Dirs, scope Scope, name string, edit func(serversEdit) error) (string, error) {
	p, err := planServers(d, scope, name, edit)
	if err != nil {
		return p.path, err
	}
	return p.path, p.commit(d, scope)
}

// planServers is editServers up to the write: it returns the file as it is
// and as it would be, validated.
func planServers(d Dirs, scope Scope, name string, edit func(serversEdit) error) (*fileEdit, error) {
	return planEdit(d, scope, name, func(path string, top *hujson.Object) error {
		if jsonc.MemberIndex(top, "mcpServers") < 0 {
			if err := jsonc.SetMember(top, "mcpServers", map[string]any{}, ""); err != nil {
				return err
			}
		}
		i := jsonc.MemberIndex(top, "mcpServers")
		servers, ok := top.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("not changing %s: mcpServers must be an object", path)
		}
		return edit(serversEdit{path: path, name: name, servers: servers, indent: jsonc.IndentOf(&top.Members[i]), member: jsonc.MemberIndex(servers, name)})
	})
}

// fileEdit is a planned change of one of our files: the file as it is
// (data) and as it will be (out).
type fileEdit struct {
	path      string
	data, out []byte
}

// Changed reports whether the edit changes the file.
func (p *fileEdit) changed() bool { return !bytes.Equal(p.out, p.data) }

// planEdit reads our file of the scope (an empty one when it does not
// exist), applies edit to its top-level object, and validates the result:
// it must parse, server (when not "") must have no error, and the file must
// have no error it did not have before.
func planEdit(d Dirs, scope Scope, server string, edit func(path string, top *hujson.Object) error) (*fileEdit, error) {
	d = d.withDefaults()
	path, err := d.File(scope)
	if err != nil {
		return &fileEdit{}, err
	}
	p := &fileEdit{path: path}
	src := Source{Kind: KindUser, Path: path}
	if scope == ScopeProject {
		src.Kind = KindProject
	}
	data, err := readFile(path)
	created := errors.Is(err, fs.ErrNotExist)
	switch {
	case created:
		data = []byte("{\n  \"mcpServers\": {}\n}\n")
	case err != nil:
		return p, err
	}
	root, err := jsonc.Parse(data)
	if err != nil {
		_, probs, _ := decodeFile(src, data)
		return p, fmt.Errorf("not changing %s: it does not parse: %s (hint: fix it, or run switchboard config validate)", path, firstError(probs))
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return p, fmt.Errorf("not changing %s: the file must hold a JSON object", path)
	}
	if err := edit(path, top); err != nil {
		return p, err
	}
	p.out = root.Pack()
	if !created {
		p.data = data
	}
	if bytes.Equal(p.out, data) {
		p.out = p.data // nothing changed: not even a new, empty file
		return p, nil
	}
	var before []Problem
	if !created {
		_, before, _ = decodeFile(src, data)
	}
	if _, probs, fatal := decodeFile(src, p.out); fatal || server != "" && hasServerError(probs, server) || len(newErrors(before, probs)) > 0 {
		return p, fmt.Errorf("not changing %s: the result would be invalid: %s", path, worstError(before, probs, server))
	}
	return p, nil
}

// commit writes the planned file atomically, and keeps the project trusted
// when it was trusted as it was.
func (p *fileEdit) commit(d Dirs, scope Scope) error {
	if !p.changed() {
		return nil
	}
	d = d.withDefaults()
	var oldHash string
	if scope == ScopeProject {
		oldHash = Load(d).Project.Hash
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", p.path, err)
	}
	if err := writeAtomic(p.path, p.out, 0o600); err != nil {
		return err
	}
	if scope == ScopeProject {
		return retrust(d, oldHash, time.Now())
	}
	return nil
}

// newErrors returns the errors of after that before did not have, compared
// by path and message (an edit moves lines).
func newErrors(before, after []Problem) []Problem {
	had := map[[2]string]bool{}
	for _, p := range before {
		if p.Severity == SeverityError {
			had[[2]string{p.Path, p.Message}] = true
		}
	}
	var out []Problem
	for _, p := range after {
		if p.Severity == SeverityError && !had[[2]string{p.Path, p.Message}] {
			out = append(out, p)
		}
	}
	return out
}

// worstError names the error that refuses an edit: a new one of the server
// edited, else any new one, else the first.
func worstError(before, after []Problem, server string) string {
	fresh := newErrors(before, after)
	for _, p := range fresh {
		if p.Server == server {
			return p.Error()
		}
	}
	if len(fresh) > 0 {
		return fresh[0].Error()
	}
	for _, p := range after {
		if p.Severity == SeverityError && p.Server == server {
			return p.Error()
		}
	}
	return firstError(after)
}

func hasServerError(probs []Problem, name string) bool {
	for _, p := range probs {
		if p.Severity == SeverityError && p.Server == name {
			return true
		}
	}
	return false
}

// writeAtomic replaces path with data (privfile.WriteAtomic).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	return privfile.WriteAtomic(path, data, mode)
}

// Hash identifies the definition: two definitions with the same hash start
// the same server the same way. The catalog keys what it knows of a server
// by this hash, so a changed definition is indexed anew. References are
// hashed as written, never resolved.
func (s *Server) Hash() string {
	def := s.Definition()
	def.Type = string(s.Type)
	def.Disabled = false
	var allow []string // settings.includeTools' part, which filters the tools listed as includeTools does
	if s.allowSet {
		allow = append([]string{"set"}, s.allowTools...)
	}
	data, _ := json.Marshal(struct {
		Name     string     `json:"name"`
		Def      Definition `json:"def"`
		Revision string     `json:"revision,omitempty"`
		Allow    []string   `json:"allow,omitempty"`
	}{s.Name, def, s.Revision, allow})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// maxFileSize bounds a configuration file; larger files are refused.
const maxFileSize = 4 << 20

// Load reads every source described by d, merges them and validates the
// result. It never fails: problems are reported in Config.Problems, and
// Config.Err says whether the configuration failed closed.
//
// It runs in phases: read and decode each file; decide whether the
// project's files count (trust); merge the settings of our own files;
// define the servers, imports first, then each file by precedence; check
// the count; fill defaults and sort.
func Load(d Dirs) *Config {
	d = d.withDefaults()
	c := &Config{Dirs: d, Settings: DefaultSettings()}
	docs, project := c.readSources()
	c.readHosts(docs, &project)
	c.Project.Dir = d.Project
	c.Project.Hash = projectHash(project.canon)
	c.applyTrust(readTrust(d), project.problems, project.fatal)
	c.mergeSettings(docs)
	pluginFiles, pluginDocs := c.readPlugins()
	merged := c.defineServers(docs, pluginFiles, pluginDocs)
	c.checkCount(merged)
	c.Servers = c.finish(merged)
	return c
}

// loaded is one source as read: doc is nil when it does not parse.
type loaded struct {
	src Source
	doc *document
}

// projectFiles gathers what the trust decision needs of the project's
// files: their canonical content, and their problems, which count only
// once the project is trusted.
type projectFiles struct {
	canon    [][]byte
	problems []Problem
	fatal    bool
}

// readSources reads and decodes every source, recording each file's state.
func (c *Config) readSources() ([]loaded, projectFiles) {
	var docs []loaded
	var project projectFiles
	for _, src := range c.Dirs.Sources() {
		data, err := readLimited(src.Path, maxFileSize)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.missing(src)
		case err != nil:
			c.unreadable(src, err, &project)
		default:
			docs = append(docs, c.decode(src, data, &project))
		}
	}
	return docs, project
}

// missing records a source that does not exist: no problem, unless the
// user named it.
func (c *Config) missing(src Source) {
	c.Files = append(c.Files, File{Source: src, State: FileMissing})
	if src.Kind == KindExplicit {
		// The user asked for this file: its absence is an error, not a default.
		c.fail(Problem{Severity: SeverityError, File: src.Path, Message: "the configuration file given with --config or SWITCHBOARD_CONFIG does not exist"})
	}
}

// unreadable records a source that exists but cannot be read.
func (c *Config) unreadable(src Source, err error, project *projectFiles) {
	prob := Problem{Severity: SeverityError, File: src.Path, Message: "cannot read: " + withoutPath(err).Error()}
	c.Files = append(c.Files, File{Source: src, State: FileInvalid})
	if !src.InProject() {
		c.fail(prob)
		return
	}
	// Like a file that does not parse: fatal only once trusted.
	c.Project.Files = append(c.Project.Files, src.Path)
	project.canon = append(project.canon, []byte(src.Kind), []byte("unreadable"))
	project.problems = append(project.problems, prob)
	project.fatal = true
}

// decode decodes one source. A project file's problems wait for the trust
// decision; any other file's count now.
func (c *Config) decode(src Source, data []byte, project *projectFiles) loaded {
	doc, problems, fatal := decodeFile(src, data)
	c.Files = append(c.Files, File{Source: src, State: stateOf(doc, fatal)})
	if src.InProject() {
		c.Project.Files = append(c.Project.Files, src.Path)
		canon := data
		if doc != nil {
			canon = doc.canon
		}
		project.canon = append(project.canon, []byte(src.Kind), canon)
		project.problems = append(project.problems, problems...)
		project.fatal = project.fatal || fatal
		return loaded{src, doc}
	}
	c.Problems = append(c.Problems, problems...)
	if fatal {
		c.err = fmt.Errorf("%w: %s", ErrInvalid, firstError(problems))
	}
	return loaded{src, doc}
}

// counts reports whether a decoded file's definitions and settings apply:
// a project file only when the project is trusted.
func (c *Config) counts(l loaded) bool {
	return l.doc != nil && !(l.src.InProject() && !c.Project.Trusted)
}

// mergeSettings merges the settings and imports of our own files that count.
func (c *Config) mergeSettings(docs []loaded) {
	for _, l := range docs {
		if c.counts(l) && l.src.Ours() {
			c.Settings.merge(l.doc)
		}
	}
}

// defineServers merges every definition, lowest precedence first: the
// imported hosts' servers, then the Agent Plugins', then each file's.
// Files list their servers whether or not they count, so that status can
// name them.
func (c *Config) defineServers(docs []loaded, pluginFiles []File, pluginDocs []loaded) map[string]*Server {
	merged := map[string]*Server{}
	files := c.Files
	c.Files = nil
	for _, host := range c.importedHosts() {
		c.importHost(host, merged) // lowest precedence, so listed first
	}
	if c.Settings.HostConfigs == HostConfigsRead {
		for _, imp := range c.hosts.project {
			c.addImport(imp, merged) // above the user's own host files
		}
	}
	c.Files = append(c.Files, pluginFiles...)
	docs = append(pluginDocs, docs...)
	c.Files = append(c.Files, files...)
	for i := range c.Files {
		f := &c.Files[i]
		for _, l := range docs {
			if l.src != f.Source || l.doc == nil {
				continue
			}
			for _, s := range l.doc.servers {
				f.Servers = append(f.Servers, s.Name)
				if c.counts(l) {
					c.define(merged, s)
				}
			}
		}
	}
	return merged
}

// checkCount fails the configuration closed when all its files together
// define more than MaxServers servers; each file alone is checked when it
// is decoded. The problem names the highest file that adds servers.
func (c *Config) checkCount(merged map[string]*Server) {
	if len(merged) <= MaxServers {
		return
	}
	file := ""
	for _, f := range c.Files {
		if len(f.Servers) > 0 && f.State == FileLoaded {
			file = f.Path
		}
	}
	c.fail(Problem{Severity: SeverityError, File: file,
		Message: fmt.Sprintf("the configuration files together define %d servers, over the limit of %d (hint: remove the servers you do not use)", len(merged), MaxServers)})
}

func stateOf(doc *document, fatal bool) FileState {
	if doc == nil || fatal {
		return FileInvalid
	}
	return FileLoaded
}

// readFile reads one of our configuration files, refusing directories and
// files over maxFileSize.
func readFile(path string) ([]byte, error) {
	data, err := readLimited(path, maxFileSize)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, err
}

// withoutPath drops the path an error from os repeats, for a message that
// names the file already.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readLimited reads a whole regular file of at most limit bytes, without
// blocking on a FIFO (privfile.ReadRegular). Errors do not name the file:
// callers do.
func readLimited(path string, limit int64) ([]byte, error) { return privfile.ReadRegular(path, limit) }

func firstError(problems []Problem) string {
	for _, p := range problems {
		if p.Severity == SeverityError {
			return p.Error()
		}
	}
	return "invalid file"
}

func (c *Config) fail(p Problem) {
	c.Problems = append(c.Problems, p)
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrInvalid, p.Error())
	}
}

// projectHash binds trust to the content of the project files, without
// comments or formatting.
func projectHash(parts [][]byte) string {
	if len(parts) == 0 {
		return ""
	}
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// applyTrust decides whether the project files count. Problems in ignored
// files are warnings: an ignored file cannot disable anything.
func (c *Config) applyTrust(trust trustFile, problems []Problem, fatal bool) {
	p := &c.Project
	if len(p.Files) == 0 {
		return
	}
	_, entry, known := trust.find(p.Dir)
	p.Trusted = known && entry.Hash == p.Hash
	p.Changed = known && !p.Trusted
	if p.Trusted {
		c.Problems = append(c.Problems, problems...)
		if fatal && c.err == nil {
			c.err = fmt.Errorf("%w: %s", ErrInvalid, firstError(problems))
		}
		return
	}
	for i := range c.Files {
		if c.Files[i].InProject() && c.Files[i].State != FileMissing {
			c.Files[i].State = FileIgnored
		}
	}
	why := "the project is not trusted"
	if p.Changed {
		why = "its server definitions changed since the project was trusted"
	}
	for _, f := range p.Files {
		c.Problems = append(c.Problems, Problem{Severity: SeverityWarning, File: f,
			Message: fmt.Sprintf("ignored: %s (hint: review it, then run switchboard trust)", why)})
	}
	for _, prob := range problems {
		prob.Severity = SeverityWarning
		prob.Message += " (in an ignored file)"
		c.Problems = append(c.Problems, prob)
	}
}

func (c *Config) importHost(host string, merged map[string]*Server) {
	imp, ok := c.hosts.user[host]
	if !ok {
		imp = ImportHost(c.Dirs, host)
	}
	c.addImport(imp, merged)
}

// importedHosts lists the hosts whose files are read: settings.imports,
// then, with settings.hostConfigs "read", every other known host.
func (c *Config) importedHosts() []string {
	hosts := c.Settings.Imports
	if c.Settings.HostConfigs == HostConfigsRead {
		hosts = appendNew(slices.Clone(hosts), HostNames()...)
	}
	return hosts
}

// define applies a higher definition over whatever was there.
func (c *Config) define(merged map[string]*Server, s *Server) {
	if s.stub {
		lower, ok := merged[s.Name]
		if !ok {
			c.Problems = append(c.Problems, Problem{Severity: SeverityWarning, File: s.Source.Path, Path: s.Path, Server: s.Name,
				Message: fmt.Sprintf(`{"disabled": true} disables nothing: no lower file defines %q`, s.Name)})
			merged[s.Name] = s
			return
		}
		cp := *lower
		cp.Disabled = true
		cp.DisabledBy = s.Source.Path
		merged[s.Name] = &cp
		return
	}
	merged[s.Name] = s
}

// finish fills defaults from settings and sorts.
func (c *Config) finish(merged map[string]*Server) []*Server {
	serverErrs := c.serverErrors()
	out := make([]*Server, 0, len(merged))
	for _, s := range merged {
		if c.Settings.Strict && !s.Source.Ours() && !s.Packaged() {
			c.Problems = append(c.Problems, Problem{Severity: SeverityWarning, File: s.Source.Path, Path: s.Path, Server: s.Name,
				Message: fmt.Sprintf("server %q is not used: settings.strict accepts only servers defined in Switchboard's own files (define it in ~/.config/switchboard/config.json to use it)", s.Name)})
			continue
		}
		s.IncludeTools = c.ownPatterns(s, "includeTools", s.IncludeTools)
		s.ExcludeTools = c.ownPatterns(s, "excludeTools", s.ExcludeTools)
		if c.Settings.AllowTools != nil {
			s.allowSet, s.allowTools = true, c.Settings.AllowTools[s.Name]
		}
		if s.IdleTimeout < 0 {
			s.IdleTimeout = c.Settings.IdleTimeout
		}
		if s.RequestTimeout == 0 {
			s.RequestTimeout = c.Settings.RequestTimeout
		}
		if !s.directSet && c.Settings.DirectTools {
			s.DirectTools = DirectTools{All: true}
		}
		if !s.rootsSet {
			s.Roots = c.Settings.Roots
		}
		if rest, ok := strings.CutPrefix(s.Socket, "~/"); ok {
			s.Socket = c.Dirs.join(c.Dirs.Home, rest)
		}
		s.Roots = s.Roots.expanded(c.Dirs)
		if c.Settings.Offline {
			s.Offline = s.offlineRefusal()
		}
		if s.Err == nil {
			if p, ok := serverErrs[serverKey{s.Source.Path, s.Name}]; ok {
				s.Err = fmt.Errorf("server %q: %s", s.Name, p.Error())
			}
		}
		if s.Err == nil && s.OAuth != nil && s.OAuth.Grant == GrantTokenExchange && c.Settings.Identity == nil {
			p := Problem{Severity: SeverityError, File: s.Source.Path, Path: s.Path + ".oauth.grant", Server: s.Name,
				Message: `the token_exchange grant exchanges the signed-in user's own access token, and no user signs in: settings.identity is not set; hint: set settings.identity (docs/team.md) or use another grant`}
			c.Problems = append(c.Problems, p)
			s.Err = fmt.Errorf("server %q: %s", s.Name, p.Error())
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ownPatterns returns a server's tool patterns with those written
// mcp__SERVER__GLOB (terret-mcp's form) turned into their glob; one that
// names another server matches nothing here, and is a warning.
func (c *Config) ownPatterns(s *Server, field string, patterns []string) []string {
	var out []string
	for _, p := range patterns {
		server, glob, ok := SplitToolPattern(p)
		switch {
		case !ok:
			out = append(out, p)
		case server == s.Name:
			out = append(out, glob)
		default:
			c.Problems = append(c.Problems, Problem{Severity: SeverityWarning, File: s.Source.Path, Path: s.Path + "." + field, Server: s.Name,
				Message: fmt.Sprintf("%q names server %q, not %q: it matches nothing here (settings.includeTools takes patterns for every server)", p, server, s.Name)})
		}
	}
	return out
}

type serverKey struct{ file, server string }

// serverErrors indexes the first server-scoped error recorded for each
// server in each file.
func (c *Config) serverErrors() map[serverKey]Problem {
	out := map[serverKey]Problem{}
	for _, p := range c.Problems {
		k := serverKey{p.File, p.Server}
		if _, seen := out[k]; !seen && p.Severity == SeverityError && p.Server != "" {
			out[k] = p
		}
	}
	return out
}

func (st *Settings) merge(doc *document) {
	st.Imports = appendNew(st.Imports, doc.imports...)
	fs := doc.settings
	if fs == nil {
		return
	}
	if fs.toolPrefix != nil {
		st.ToolPrefix = *fs.toolPrefix
	}
	if fs.freezeDirect != nil {
		st.FreezeDirectTools = *fs.freezeDirect
	}
	if fs.noAppTools != nil {
		st.NoAppTools = *fs.noAppTools
	}
	if fs.scriptMode != nil {
		st.ScriptMode = *fs.scriptMode
	}
	if fs.scriptTimeout != nil {
		st.ScriptTimeout = *fs.scriptTimeout
	}
	if fs.trace != nil {
		st.Trace = *fs.trace
	}
	if fs.idleTimeout != nil {
		st.IdleTimeout = *fs.idleTimeout
	}
	if fs.requestTimeout != nil {
		st.RequestTimeout = *fs.requestTimeout
	}
	if fs.maxBytes != nil {
		st.Output.MaxBytes = *fs.maxBytes
	}
	if fs.maxLines != nil {
		st.Output.MaxLines = *fs.maxLines
	}
	if fs.unbounded != nil {
		st.Output.Unbounded = *fs.unbounded
	}
	if fs.strict != nil {
		st.Strict = *fs.strict
	}
	if fs.allowTools != nil {
		st.AllowTools = fs.allowTools // a higher file's list replaces a lower one's
	}
	if fs.directTools != nil {
		st.DirectTools = *fs.directTools
	}
	st.Imports = appendNew(st.Imports, fs.imports...)
	if fs.embeddings != nil {
		st.Embeddings = fs.embeddings
	}
	if fs.credStore != nil {
		st.CredentialStore = *fs.credStore
	}
	if fs.registry != nil {
		st.Registry = *fs.registry
	}
	if fs.hostConfigs != nil {
		st.HostConfigs = *fs.hostConfigs
	}
	if fs.credStoreKey != nil {
		st.CredentialStoreKey = *fs.credStoreKey
	}
	if fs.telemetry != nil {
		st.Telemetry = *fs.telemetry
	}
	if fs.store != nil {
		st.Store = fs.store
	}
	if fs.identity != nil {
		st.Identity = fs.identity
	}
	if fs.roots != nil {
		st.Roots = fs.roots
	}
	for _, dir := range fs.agentPlugins {
		if !slices.Contains(st.AgentPluginPaths, dir) {
			st.AgentPluginPaths = append(st.AgentPluginPaths, dir)
		}
	}
	st.mergePolicy(fs.policy)
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !containsFold(list, it) {
			list = append(list, it)
		}
	}
	return list
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

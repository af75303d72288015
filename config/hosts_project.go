package config

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// Other hosts' files read directly (settings.imports, settings.hostConfigs
// "read") meet the trust rules of project files: a host file inside the
// project directory, such as the project's .cursor/mcp.json or
// .vscode/mcp.json, or a CODEX_HOME that points into the project, is the
// project's, not the user's. Its servers count only once the project is
// trusted, and its content is part of the project's hash, so a change to
// it needs switchboard trust again. Host files in the user's own
// directories are the user's and count as they are.
//
// Which hosts are read depends on settings, and settings on trust; so the
// hosts that any of our files names (trusted or not) are read before the
// trust decision, which then covers the project's share of them.

// hostReads are the hosts' files read before the trust decision.
type hostReads struct {
	user    map[string]*Import // by host: the host's own files
	project []*Import          // the hosts' files inside the project (ReadProject)
}

// readHosts reads the hosts any of our files asks for, and adds their
// files inside the project to the project's files and hash.
func (c *Config) readHosts(docs []loaded, project *projectFiles) {
	var names []string
	read := false
	for _, l := range docs {
		if l.doc == nil || !l.src.Ours() {
			continue
		}
		names = appendNew(names, l.doc.imports...)
		if fs := l.doc.settings; fs != nil {
			names = appendNew(names, fs.imports...)
			read = read || fs.hostConfigs != nil && *fs.hostConfigs == HostConfigsRead
		}
	}
	if read {
		names = appendNew(names, HostNames()...)
	}
	c.hosts.user = map[string]*Import{}
	for _, host := range names {
		imp := ImportHost(c.Dirs, host)
		c.hosts.user[host] = imp
		c.projectShare(imp, project)
	}
	if read && c.Dirs.Project != "" && !c.homeInProject() {
		byHost := hosts.ReadProject(c.Dirs.Hosts(), c.Dirs.Project)
		for _, host := range slices.Sorted(mapsKeys(byHost)) {
			imp := &Import{Host: host}
			for _, f := range byHost[host] {
				imp.add(f)
			}
			imp.skipSelf(c.Dirs.Self)
			c.hosts.project = append(c.hosts.project, imp)
			c.projectShare(imp, project)
		}
	}
}

// projectShare adds imp's files inside the project to the project's files
// and to what its hash covers.
func (c *Config) projectShare(imp *Import, project *projectFiles) {
	for _, path := range imp.Files {
		if !c.hostFileInProject(path) {
			continue
		}
		data, err := readLimited(path, hosts.MaxFileSize)
		if err != nil {
			data = []byte("unreadable")
		}
		c.Project.Files = append(c.Project.Files, path)
		project.canon = append(project.canon, []byte("host:"+imp.Host+":"+filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path)), data)
	}
}

// hostFileInProject reports whether a host's file is inside the project
// directory. When the project is the home directory or holds it (a
// command run from the home directory), every host file is the user's own.
func (c *Config) hostFileInProject(path string) bool {
	return c.Dirs.Project != "" && !c.homeInProject() && pathWithin(c.Dirs.Project, path)
}

func (c *Config) homeInProject() bool {
	return c.Dirs.Home == "" || pathWithin(c.Dirs.Project, c.Dirs.Home)
}

// pathWithin reports whether path is dir or inside it.
func pathWithin(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// addImport defines the servers of a host's import, lowest precedence.
// The files inside the project count only when the project is trusted;
// otherwise they are listed, ignored.
func (c *Config) addImport(imp *Import, merged map[string]*Server) {
	for _, prob := range imp.Problems {
		prob.Severity = SeverityWarning // an import cannot fail the configuration
		c.Problems = append(c.Problems, prob)
	}
	for _, path := range imp.Files {
		f := File{Source: Source{Kind: KindImport, Path: path, Host: imp.Host}, State: FileLoaded}
		counts := !c.hostFileInProject(path) || c.Project.Trusted
		if !counts {
			f.State = FileIgnored
		}
		for _, s := range imp.Servers {
			if s.Source.Path == path {
				f.Servers = append(f.Servers, s.Name)
				if counts {
					c.define(merged, s)
				}
			}
		}
		c.Files = append(c.Files, f)
	}
}

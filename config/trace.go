package config

import (
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// Trace is settings.trace: serve writes, for each client session, a file
// of JSON lines saying what the session did (its client, each call's
// operation, server, tool, outcome and duration), never what was sent or
// answered: no arguments, results, prompts, URLs or credentials.
type Trace struct {
	// Dir holds the files, one per client session; "" is the state
	// directory's "traces". "~/" is the home directory.
	Dir string
	// MaxBytes and MaxEvents bound one session's file; what comes after
	// either is dropped, and a last line says so.
	MaxBytes, MaxEvents int
}

// Trace defaults: pi-mcp-adapter's bounds.
const (
	DefaultTraceMaxBytes  = 256 << 10
	DefaultTraceMaxEvents = 10000
)

// TraceDir is where the trace files go.
func (c *Config) TraceDir() string {
	t := c.Settings.Trace
	switch {
	case t == nil:
		return ""
	case t.Dir == "":
		return filepath.Join(c.Dirs.StateDir(), "traces")
	case strings.HasPrefix(t.Dir, "~/"):
		return c.Dirs.join(c.Dirs.Home, t.Dir[2:])
	}
	return t.Dir
}

// trace decodes settings.trace: true, false, or {"dir", "maxBytes",
// "maxEvents"}.
func (d *decoder) trace(v *hujson.Value, path string) (*Trace, bool) {
	if lit, ok := v.Value.(hujson.Literal); ok && (lit.Kind() == 't' || lit.Kind() == 'f') {
		if !lit.Bool() {
			return nil, true
		}
		return &Trace{MaxBytes: DefaultTraceMaxBytes, MaxEvents: DefaultTraceMaxEvents}, true
	}
	obj, ok := d.object(v, path)
	if !ok {
		return nil, false
	}
	t := &Trace{MaxBytes: DefaultTraceMaxBytes, MaxEvents: DefaultTraceMaxEvents}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "dir":
			if d.src.InProject() {
				d.errorf(m.value, p, "belongs in your own configuration file, not a project's: a project cannot choose where files are written")
				continue
			}
			if str, ok := d.str(m.value, p); ok {
				if !filepath.IsAbs(str) && !strings.HasPrefix(str, "~/") {
					d.errorf(m.value, p, "must be an absolute directory (or start with ~/), not %q", str)
				} else {
					t.Dir = str
				}
			}
		case "maxBytes":
			if n, ok := d.integer(m.value, p, 1024, 1<<30); ok {
				t.MaxBytes = int(n)
			}
		case "maxEvents":
			if n, ok := d.integer(m.value, p, 1, 10_000_000); ok {
				t.MaxEvents = int(n)
			}
		default:
			d.unknown(m.value, path, m.key, []string{"dir", "maxBytes", "maxEvents"})
		}
	}
	return t, true
}

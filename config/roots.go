package config

import (
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// RootsClient is the entry of a roots list that forwards the roots of the
// client switchboard serves (serve over stdio) to the server.
const RootsClient = "client"

// Roots is what a server is offered when it asks for its roots
// (roots/list): the directories it may work in. A filesystem server
// (@modelcontextprotocol/server-filesystem) REPLACES the directories of its
// command line with the roots it is offered, so roots widen its reach as
// much as they name: they are the user's decision, and offered only where
// the configuration says so (docs/configuration.md, Roots).
//
// In a file, "roots" is a list: absolute directories ("~" and "~/…" are the
// home directory), offered as file:// roots, and the entry "client", which
// forwards the roots of the client that serve over stdio serves. A
// relative directory is refused: its meaning would change with the
// directory switchboard runs in.
type Roots struct {
	// Dirs are the directories offered, absolute, with "~" expanded.
	Dirs []string
	// Client forwards the roots of the connected client (serve over
	// stdio) besides Dirs. Over HTTP, and in the CLI and the panel,
	// there is no one client whose roots could be forwarded.
	Client bool

	written []string // as the file has it, for Definition
}

// Offers reports whether a server with these roots is offered any: a
// server that is not is not told switchboard has roots at all (the roots
// capability is not declared to it).
func (r *Roots) Offers() bool { return r != nil && (len(r.Dirs) > 0 || r.Client) }

// roots decodes a roots list, its directories not yet expanded.
func (d *decoder) roots(v *hujson.Value, path string) *Roots {
	entries, ok := d.texts(v, path)
	if !ok {
		return nil
	}
	r := &Roots{Dirs: []string{}, written: entries}
	arr := v.Value.(*hujson.Array)
	for i, e := range entries {
		at, p := &arr.Elements[i], fmt.Sprintf("%s[%d]", path, i)
		switch {
		case e == RootsClient:
			r.Client = true
		case e == "":
			d.errorf(at, p, `must not be empty: write an absolute directory such as "~/projects", or "client"`)
			return nil
		case !absRoot(e):
			d.errorf(at, p, `%q is relative: write an absolute directory such as "/home/me/projects" or "~/projects" (a relative one would change with the directory switchboard runs in), or "client" for the connected client's roots`, truncate(e, 80))
			return nil
		default:
			r.Dirs = append(r.Dirs, e)
		}
	}
	return r
}

// absRoot reports whether a roots entry is absolute on some platform, or
// starts at the home directory: /x, ~, ~/x, and C:\x, C:/x, \\host\share.
func absRoot(e string) bool {
	switch {
	case strings.HasPrefix(e, "/"), e == "~", strings.HasPrefix(e, "~/"), strings.HasPrefix(e, `~\`):
		return true
	case len(e) >= 3 && e[1] == ':' && (e[2] == '\\' || e[2] == '/'):
		c := e[0] | 0x20
		return 'a' <= c && c <= 'z'
	}
	return strings.HasPrefix(e, `\\`)
}

// expanded returns a copy of r with "~" expanded to the home directory.
func (r *Roots) expanded(d Dirs) *Roots {
	if r == nil {
		return nil
	}
	out := &Roots{Client: r.Client, written: r.written, Dirs: make([]string, 0, len(r.Dirs))}
	for _, dir := range r.Dirs {
		if dir == "~" || strings.HasPrefix(dir, "~/") || strings.HasPrefix(dir, `~\`) {
			dir = d.join(d.Home, dir[min(len(dir), 2):])
		}
		out.Dirs = append(out.Dirs, dir)
	}
	return out
}

// definition is what to write to reproduce r: nil when unset.
func (r *Roots) definition() []string {
	if r == nil {
		return nil
	}
	return append([]string{}, r.written...)
}

package proxy

import (
	"fmt"
	"sort"
	"strings"
)

// Audience is who reads a result's text. It decides only how the text
// suggests a next step: an agent is shown the request of the mcp tool that
// takes it, a person the switchboard command. Everything else both read is
// the same text, so each suggestion is written here once, in both forms.
type Audience int

const (
	// Agents are shown requests: {"operation": "resources.list", "server": "github"}.
	// This is the zero value: the mcp tool's text never changes.
	Agents Audience = iota
	// People are shown commands: switchboard resources github.
	People
)

func (a Audience) pick(agent, person string) string {
	if a == People {
		return person
	}
	return agent
}

// ListResources suggests listing a server's resources.
func (a Audience) ListResources(server string) string {
	return a.pick(fmt.Sprintf(`{"operation": "resources.list", "server": %q}`, server),
		"switchboard resources "+ShellQuote(server))
}

// ReadResource suggests reading one of a server's resources by reference.
func (a Audience) ReadResource(server string) string {
	return a.pick(fmt.Sprintf(`{"operation": "resources.read", "server": %q, "resource": REF}`, server),
		"switchboard read "+ShellQuote(server)+" REF")
}

// ReadTemplate says how to read a URI made from one of a server's resource
// templates.
func (a Audience) ReadTemplate(server string) string {
	return a.pick(`by giving it as "resource"`, "with switchboard read "+ShellQuote(server)+" URI")
}

// ResourcesListName names the listing that hands out resource references.
func (a Audience) ResourcesListName(server string) string {
	return a.pick("resources.list", "switchboard resources "+ShellQuote(server))
}

// GetPrompt suggests getting one of a server's prompts.
func (a Audience) GetPrompt(server string) string {
	return a.pick(fmt.Sprintf(`{"operation": "prompts.get", "server": %q, "prompt": NAME, "args": {…}}`, server),
		"switchboard prompt "+ShellQuote(server)+" NAME [key=value …]")
}

// CallTool suggests calling a tool named in a listing.
func (a Audience) CallTool() string {
	return a.pick(`{"tool": NAME, "args": {…}}`, "switchboard call NAME [key=value …]")
}

// ListTools suggests listing a server's tools.
func (a Audience) ListTools() string {
	return a.pick(`{"server": NAME}`, "switchboard tools SERVER")
}

// Search suggests searching for query.
func (a Audience) Search(query string) string {
	return a.pick(fmt.Sprintf(`{"search": %q}`, query), "switchboard search "+ShellQuote(query))
}

// IncludeDisabled names the way to search disabled servers too.
func (a Audience) IncludeDisabled() string {
	return a.pick(`"includeDisabled": true`, "--include-disabled")
}

// ServerField names the way to give a request's server.
func (a Audience) ServerField() string {
	return a.pick(`"server"`, "--server SERVER")
}

// ShellQuote quotes s for a POSIX shell, leaving words that need no
// quoting as they are.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Closest returns up to limit of names that are nearest to name: the same
// when case and '-' versus '_' are ignored, within a small edit distance,
// or holding one another; of those, only the nearest. It is how an unknown
// server, command or argument name gets "did you mean".
func Closest(name string, names []string, limit int) []string {
	norm := Normalize(name)
	type scored struct {
		name string
		dist int
	}
	var list []scored
	for _, n := range names {
		c := Normalize(n)
		d := levenshtein(norm, c)
		if norm != "" && (strings.Contains(c, norm) || strings.Contains(norm, c)) {
			d = min(d, abs(len(c)-len(norm))/2)
		}
		if d <= max(len(norm)/3, 2) {
			list = append(list, scored{n, d})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].dist < list[j].dist })
	var out []string
	for i := 0; i < len(list) && i < limit && list[i].dist == list[0].dist; i++ {
		out = append(out, list[i].name)
	}
	return out
}

package proxy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ToolRef names a tool by its server and original name.
type ToolRef struct {
	Server string
	Name   string
}

// Prefixed is the server-prefixed name, e.g. github_create_issue.
func (r ToolRef) Prefixed() string { return r.Server + "_" + r.Name }

// Names resolves the tool names an agent writes to tools. Matching ignores
// case and treats '-' and '_' alike; a name may carry its server as a
// prefix (server_tool) when no server is given.
type Names struct {
	// Audience decides how errors suggest the next step (zero: agents).
	Audience Audience

	servers map[string]string    // normalized server name → server name
	tools   map[string][]ToolRef // normalized "server\x00tool" and "\x00tool" keys
	all     []ToolRef
}

// NewNames indexes tools, given per server as original names.
func NewNames(tools map[string][]string) *Names {
	n := &Names{servers: map[string]string{}, tools: map[string][]ToolRef{}}
	servers := make([]string, 0, len(tools))
	for s := range tools {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	for _, s := range servers {
		n.servers[Normalize(s)] = s
		for _, t := range tools[s] {
			ref := ToolRef{Server: s, Name: t}
			n.all = append(n.all, ref)
			n.tools["\x00"+Normalize(t)] = append(n.tools["\x00"+Normalize(t)], ref)
			n.tools[Normalize(s)+"\x00"+Normalize(t)] = append(n.tools[Normalize(s)+"\x00"+Normalize(t)], ref)
		}
	}
	return n
}

// Normalize is how names of servers and tools are matched: case is
// ignored, and '-' and '_' are alike.
func Normalize(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

// ErrAmbiguous is matched by the error of a name found on several servers.
var ErrAmbiguous = errors.New("ambiguous tool name")

// ErrUnknownTool is matched by the error of a name found nowhere.
var ErrUnknownTool = errors.New("unknown tool")

// Resolve finds the tool an agent means. server may be empty. A name on
// several servers is an error listing them; an unknown name is an error
// with up to five suggestions.
func (n *Names) Resolve(name, server string) (ToolRef, error) {
	var cands []ToolRef
	if server != "" {
		s := Normalize(server)
		cands = n.tools[s+"\x00"+Normalize(name)]
		if len(cands) == 0 {
			if rest, ok := strings.CutPrefix(Normalize(name), s+"_"); ok {
				cands = n.tools[s+"\x00"+rest]
			}
		}
	} else {
		cands = append(cands, n.tools["\x00"+Normalize(name)]...)
		cands = append(cands, n.prefixed(name)...)
		cands = dedupe(cands)
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		return ToolRef{}, n.unknown(name, server)
	}
	if exact := exactMatches(cands, name); len(exact) == 1 {
		return exact[0], nil
	}
	var list []string
	for _, c := range cands {
		list = append(list, fmt.Sprintf("%q on %q", c.Name, c.Server))
	}
	return ToolRef{}, fmt.Errorf("%w %q: it is %s; nothing was called (hint: add %s, or use a prefixed name such as %q)",
		ErrAmbiguous, name, strings.Join(list, " and "), n.Audience.ServerField(), cands[0].Prefixed())
}

// prefixed finds tools named as server_tool, or mcp__server__tool (as
// Claude Code and pi-mcp-adapter name them, and toolPrefix "mcp").
func (n *Names) prefixed(name string) []ToolRef {
	norm := Normalize(name)
	var out []ToolRef
	if rest, ok := strings.CutPrefix(norm, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok && tool != "" {
			out = append(out, n.tools[server+"\x00"+tool]...)
		}
	}
	for ns := range n.servers {
		if rest, ok := strings.CutPrefix(norm, ns+"_"); ok && rest != "" {
			out = append(out, n.tools[ns+"\x00"+rest]...)
		}
	}
	return out
}

func exactMatches(cands []ToolRef, name string) []ToolRef {
	var out []ToolRef
	for _, c := range cands {
		if c.Name == name || c.Prefixed() == name || "mcp__"+c.Server+"__"+c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func dedupe(refs []ToolRef) []ToolRef {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Server != refs[j].Server {
			return refs[i].Server < refs[j].Server
		}
		return refs[i].Name < refs[j].Name
	})
	out := refs[:0]
	for i, r := range refs {
		if i == 0 || r != refs[i-1] {
			out = append(out, r)
		}
	}
	return out
}

func (n *Names) unknown(name, server string) error {
	where := "on any server"
	if server != "" {
		where = fmt.Sprintf("on %q", server)
	}
	sugg := n.Suggest(name, server, 5)
	if len(sugg) == 0 {
		return fmt.Errorf("%w %q %s (hint: search for it: %s)", ErrUnknownTool, name, where, n.Audience.Search(name))
	}
	var list []string
	for _, s := range sugg {
		list = append(list, fmt.Sprintf("%s (%s)", s.Name, s.Server))
	}
	return fmt.Errorf("%w %q %s; did you mean: %s", ErrUnknownTool, name, where, strings.Join(list, ", "))
}

// Suggest returns up to limit tools whose names are close to name, closest
// first. A name that starts with a server's name is also compared, with
// that prefix removed, to the tools of that server: agents write prefixed
// names. A tool whose name starts with, or contains, what was written (three
// characters or more) is close however long the rest is, so "ctx_resolv"
// finds "resolve-library-id" on "ctx"; otherwise the edit distance decides:
// a typo or two, at most a third of the length of what was written.
func (n *Names) Suggest(name, server string, limit int) []ToolRef {
	norm := Normalize(name)
	type scored struct {
		ref        ToolRef
		rank, dist int
	}
	var list []scored
	for _, r := range n.all {
		if server != "" && Normalize(r.Server) != Normalize(server) {
			continue
		}
		t := Normalize(r.Name)
		rank, dist, ok := closeness(norm, t)
		if rest, cut := strings.CutPrefix(norm, Normalize(r.Server)+"_"); cut && rest != "" {
			if rk, d, rok := closeness(rest, t); rok && (!ok || rk < rank || rk == rank && d < dist) {
				rank, dist, ok = rk, d, true
			}
		}
		if ok {
			list = append(list, scored{r, rank, dist})
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		if a.ref.Server != b.ref.Server {
			return a.ref.Server < b.ref.Server
		}
		return a.ref.Name < b.ref.Name
	})
	var out []ToolRef
	for i := 0; i < len(list) && i < limit; i++ {
		out = append(out, list[i].ref)
	}
	return out
}

// Ranks of closeness, closest first.
const (
	rankSame = iota
	rankPrefix
	rankSubstring
	rankEdit
)

// closeness says how close the written name q is to the tool name t (both
// normalized): a rank, a distance within the rank, and whether it is close
// at all.
func closeness(q, t string) (rank, dist int, ok bool) {
	const minPart = 3 // shorter names start or are inside too many others
	diff := abs(len(t) - len(q))
	switch {
	case q == t:
		return rankSame, 0, true
	case len(q) >= minPart && strings.HasPrefix(t, q), len(t) >= minPart && strings.HasPrefix(q, t):
		return rankPrefix, diff, true
	case len(q) >= minPart && strings.Contains(t, q), len(t) >= minPart && strings.Contains(q, t):
		return rankSubstring, diff, true
	}
	if d := levenshtein(q, t); d <= max(len(q)/3, 2) {
		return rankEdit, d, true
	}
	return 0, 0, false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// levenshtein is the edit distance between a and b, by bytes.
func levenshtein(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

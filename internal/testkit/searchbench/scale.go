package searchbench

import (
	"slices"
	"strings"
	"unicode"

	"github.com/switchboard-mcp/switchboard/internal/testkit/forks"
)

// Search at scale: the catalog package benchmarks search over catalogs of
// 10,000 tools and more made from the real one (internal/testkit/forks),
// and Scale makes the same catalog from the same tools, so that quality is
// measured on what speed is.

// Scale returns tools (the real catalog, in its order) and copies of its
// servers, n tools in all (the last copy cut short), deterministically,
// as forks.Scale makes them; a copy keeps all else of its tool.
// copies maps each tool of tools to its copies in the result (itself
// first), for labelling: a copy of a relevant tool is as relevant.
func Scale(tools []Tool, n int) (out []Tool, copies map[Ref][]Ref) {
	plain := make([]forks.Tool, len(tools))
	for i, t := range tools {
		plain[i] = forks.Tool{Server: t.Server, Name: t.Name, Description: t.Description}
	}
	copies = map[Ref][]Ref{}
	for _, s := range forks.Scale(plain, n) {
		for _, c := range s.Tools {
			t := tools[c.Of]
			orig := Ref{t.Server, t.Name}
			t.Server, t.Name, t.Description = s.Name, c.Name, c.Description
			copies[orig] = append(copies[orig], Ref{t.Server, t.Name})
			out = append(out, t)
		}
	}
	return out, copies
}

// WithCopies returns queries whose relevant tools include every copy of
// each (in the same group), as Scale made them.
func WithCopies(queries []Query, copies map[Ref][]Ref) []Query {
	out := make([]Query, len(queries))
	for i, q := range queries {
		q.Relevant = nil
		for _, r := range queries[i].Relevant {
			cs := copies[Ref{r.Server, r.Name}]
			if len(cs) == 0 {
				cs = []Ref{{r.Server, r.Name}}
			}
			for _, c := range cs {
				q.Relevant = append(q.Relevant, Relevant{Server: c.Server, Name: c.Name, Group: r.Group})
			}
		}
		out[i] = q
	}
	return out
}

// Short queries. Agents type two to five words ("weather Lisbon
// tomorrow"), not sentences. ShortQueries derives such queries from
// labelled ones mechanically, so that they are not written to suit the
// search: a query of two to five words is kept as it is; a longer one
// becomes its first k content words (words that are not English function
// words, numbers or paths), in order, with k from 2 to 5 in turn over the
// queries. Queries of other kinds than keep (all when keep is empty), and
// queries left with fewer than two words, are dropped.
func ShortQueries(queries []Query, keep ...string) []Query {
	var out []Query
	for _, q := range queries {
		if len(keep) > 0 && !slices.Contains(keep, q.Kind) || len(q.Relevant) == 0 {
			continue
		}
		fields := strings.Fields(q.Query)
		if len(fields) < 2 {
			continue
		}
		if len(fields) > 5 {
			k := 2 + len(out)%4
			var ws []string
			for _, f := range fields {
				w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
				if w == "" || functionWords[strings.ToLower(w)] || !strings.ContainsFunc(w, unicode.IsLetter) || strings.ContainsAny(w, "/\\") {
					continue
				}
				if ws = append(ws, w); len(ws) == k {
					break
				}
			}
			if len(ws) < 2 {
				continue
			}
			fields = ws
		}
		q.ID = "short-" + q.ID
		q.Query = strings.Join(fields, " ")
		q.Kind = "short"
		out = append(out, q)
	}
	return out
}

// functionWords are English words that carry grammar, not a need: articles,
// pronouns, auxiliaries, prepositions and conjunctions, and the words of
// asking ("please", "can you").
var functionWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor so yet if then than that this these those there here
	i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
	is are was were be been being am do does did have has had will would shall should can could may might must
	of in on at to for from by with about as into onto over under between through during before after up down out off
	what which who whom whose where when why how whether not no please just also too very some any all each
	i'm it's what's let's don't i'd i'll i've you're there's that's`) {
		m[w] = true
	}
	return m
}()

// Crowding returns how many results of a query's top 10, on average, are
// a copy of a tool listed above them (copies as Scale returns them): the
// places near duplicates take from other tools.
func Crowding(runs []Run, copies map[Ref][]Ref) float64 {
	orig := map[Ref]Ref{}
	for o, cs := range copies {
		for _, c := range cs {
			orig[c] = o
		}
	}
	if len(runs) == 0 {
		return 0
	}
	n := 0
	for _, r := range runs {
		seen := map[Ref]bool{}
		for i, x := range r.Results {
			if i >= depth {
				break
			}
			o, ok := orig[x]
			if !ok {
				o = x
			}
			if seen[o] {
				n++
			}
			seen[o] = true
		}
	}
	return float64(n) / float64(len(runs))
}

package searchbench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Search at scale. The catalog package benchmarks search over catalogs of
// 10,000 tools and more made from the real one by copying its servers
// under other names, as registries hold forks and republished copies
// (catalog's scaleCatalog, in scale_test.go). Scale makes the same
// catalog from the same tools, by the same steps and the same seed, so
// that quality is measured on what speed is: a copy keeps its tools as
// they are (a fork), rewords the descriptions, or renames the tools to
// camelCase and drops some.

var (
	forkSuffixes = strings.Fields(`fork mcp server lite plus pro community official next v2 remote local py ts go rs`)
	rewords      = []string{"", "Fork: ", "(community edition) ", "Improved version. ", "Uses the v2 API. "}
)

// Scale returns tools (the real catalog, in its order) and copies of its
// servers, n tools in all (the last copy cut short), deterministically.
// copies maps each tool of tools to its copies in the result (itself
// first), for labelling: a copy of a relevant tool is as relevant.
func Scale(tools []Tool, n int) (out []Tool, copies map[Ref][]Ref) {
	var order []string
	byServer := map[string][]Tool{}
	for _, t := range tools {
		if _, ok := byServer[t.Server]; !ok {
			order = append(order, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	copies = map[Ref][]Ref{}
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	for round := 0; len(out) < n; round++ {
		for _, s := range order {
			if len(out) >= n {
				break
			}
			server, mode := s, 0
			if round > 0 {
				server = fmt.Sprintf("%s-%s-%d", s, forkSuffixes[rng.IntN(len(forkSuffixes))], round)
				mode = rng.IntN(10)
			}
			for _, t := range byServer[s] {
				if len(out) >= n {
					break
				}
				c := Tool{Server: server, Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
				switch {
				case mode >= 8: // renamed, some dropped
					if rng.IntN(4) == 0 {
						continue
					}
					c.Name = camel(strings.ReplaceAll(c.Name, "-", "_"))
				case mode >= 5: // reworded
					c.Description = rewords[rng.IntN(len(rewords))] + c.Description
				}
				orig := Ref{t.Server, t.Name}
				copies[orig] = append(copies[orig], Ref{c.Server, c.Name})
				out = append(out, c)
			}
		}
	}
	return out, copies
}

// camel joins snake_case words as camelCase.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
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
		if len(keep) > 0 && !contains(keep, q.Kind) || len(q.Relevant) == 0 {
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
				if w == "" || functionWords[strings.ToLower(w)] || !hasLetter(w) || strings.ContainsAny(w, "/\\") {
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

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

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

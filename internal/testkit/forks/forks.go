// Package forks makes a large tool catalog from a real one, as public
// registries hold them: each server copied under other names, forks and
// republished copies of it, until the catalog has n tools. A copy keeps its
// tools as they are (a fork: the same names and descriptions), rewords the
// descriptions, or renames the tools to camelCase and drops some.
//
// The catalog package benchmarks search speed on such catalogs, and
// searchbench measures search quality on them: both take them from here,
// so that quality is measured on what speed is.
package forks

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A Tool is what a copy may change of a tool of the real catalog.
type Tool struct {
	Server, Name, Description string
}

// A Server is one server of the scaled catalog, in order.
type Server struct {
	Name  string
	Tools []Copy
}

// A Copy is a tool of the scaled catalog: the tool at index Of of the
// real catalog, under its own name and description.
type Copy struct {
	Of                int
	Name, Description string
}

var (
	suffixes = strings.Fields(`fork mcp server lite plus pro community official next v2 remote local py ts go rs`)
	rewords  = []string{"", "Fork: ", "(community edition) ", "Improved version. ", "Uses the v2 API. "}
)

// Scale returns the real catalog tools (listed server by server, servers
// in their order) and copies of its servers, n tools in all (the last copy
// cut short), deterministically: the same tools and n give the same
// catalog. The first round is the real catalog as it is.
func Scale(tools []Tool, n int) []Server {
	var order []string
	byServer := map[string][]int{}
	for i, t := range tools {
		if _, ok := byServer[t.Server]; !ok {
			order = append(order, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], i)
	}
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	var out []Server
	total := 0
	for round := 0; total < n; round++ {
		for _, s := range order {
			if total >= n {
				break
			}
			srv, mode := Server{Name: s}, 0
			if round > 0 {
				srv.Name = fmt.Sprintf("%s-%s-%d", s, suffixes[rng.IntN(len(suffixes))], round)
				mode = rng.IntN(10)
			}
			for _, i := range byServer[s] {
				if total >= n {
					break
				}
				c := Copy{Of: i, Name: tools[i].Name, Description: tools[i].Description}
				switch {
				case mode >= 8: // renamed, some dropped
					if rng.IntN(4) == 0 {
						continue
					}
					c.Name = Camel(strings.ReplaceAll(c.Name, "-", "_"))
				case mode >= 5: // reworded
					c.Description = rewords[rng.IntN(len(rewords))] + c.Description
				}
				srv.Tools = append(srv.Tools, c)
				total++
			}
			out = append(out, srv)
		}
	}
	return out
}

// Camel joins snake_case words as camelCase.
func Camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

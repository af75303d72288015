// Package searchbench measures catalog search quality from outside: it loads
// a JSONL tool catalog into a fresh catalog through the same path as real
// indexing (catalog.Put), runs labelled queries through the real search, and
// writes or scores the ranked results.
//
// The file formats are fixed, shared with the scorer in
// ../shared/bench/search (score.py):
//
//	catalog: {"server","name","description","inputSchema","annotations"} per line
//	queries: {"id","query","relevant":[{"server","name","group"}],"kind"} per line
//	run:     {"id","results":[{"server","name"},…],"latency_ms"} per line, best first
//
// latency_ms is the time of the query's search in milliseconds, with the
// index already built (the first search, which builds it, is not timed);
// the scorer ignores it.
package searchbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// Tool is one catalog line.
type Tool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`

	// Annotations are the tool's hints (readOnlyHint, destructiveHint…),
	// when the catalog line has them.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Query is one labelled query.
type Query struct {
	ID       string     `json:"id"`
	Query    string     `json:"query"`
	Kind     string     `json:"kind,omitempty"`
	Relevant []Relevant `json:"relevant,omitempty"`
}

// Relevant is a tool that serves one need (group) of a query.
type Relevant struct {
	Server string `json:"server"`
	Name   string `json:"name"`
	Group  int    `json:"group"`
}

// Ref names one tool in a run.
type Ref struct {
	Server string `json:"server"`
	Name   string `json:"name"`
}

// Run is one query's ranked results, and how long its search took (the
// scorer ignores it).
type Run struct {
	ID        string  `json:"id"`
	Results   []Ref   `json:"results"`
	LatencyMS float64 `json:"latency_ms"`
}

// EvalRun loads catalogJSONL into a fresh temporary catalog, runs every query
// of queriesJSONL through Search across all servers, and writes each query's
// top k results to out, one Run per line, in the order of the queries.
func EvalRun(catalogJSONL, queriesJSONL io.Reader, out io.Writer, k int) error {
	tools, err := ReadJSONL[Tool](catalogJSONL)
	if err != nil {
		return fmt.Errorf("reading catalog: %w", err)
	}
	queries, err := ReadJSONL[Query](queriesJSONL)
	if err != nil {
		return fmt.Errorf("reading queries: %w", err)
	}
	runs, err := Evaluate(context.Background(), tools, queries, k)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Evaluate loads tools into a fresh temporary catalog and returns each
// query's top k results.
func Evaluate(ctx context.Context, tools []Tool, queries []Query, k int) (_ []Run, err error) {
	dir, err := os.MkdirTemp("", "switchboard-search-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c, err := catalog.Open(filepath.Join(dir, "catalog.db"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := Load(ctx, c, tools); err != nil {
		return nil, err
	}
	runs := make([]Run, 0, len(queries))
	// The first search builds the index: time that apart, not as the
	// first query's latency.
	if _, err := c.Search(ctx, "", catalog.SearchOptions{Limit: 1}); err != nil {
		return nil, err
	}
	for _, q := range queries {
		start := time.Now()
		res, err := c.Search(ctx, q.Query, catalog.SearchOptions{Limit: k})
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		r := Run{ID: q.ID, Results: []Ref{}, LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
		for _, h := range res.Results {
			r.Results = append(r.Results, Ref{Server: h.Server, Name: h.Name})
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Load stores tools in c, one Put per server, as indexing a server would.
func Load(ctx context.Context, c *catalog.Catalog, tools []Tool) error {
	var order []string
	byServer := map[string][]*mcp.Tool{}
	for _, t := range tools {
		if _, ok := byServer[t.Server]; !ok {
			order = append(order, t.Server)
		}
		mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
		if len(t.InputSchema) > 0 {
			var schema any
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				return fmt.Errorf("tool %s/%s: input schema: %w", t.Server, t.Name, err)
			}
			mt.InputSchema = schema
		}
		byServer[t.Server] = append(byServer[t.Server], mt)
	}
	now := time.Now()
	for _, s := range order {
		e := &catalog.Entry{Server: s, Hash: "search-eval", Tools: byServer[s], FetchedAt: now}
		if err := c.Put(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL decodes one T per non-empty line.
func ReadJSONL[T any](r io.Reader) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []T
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

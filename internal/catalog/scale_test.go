package catalog

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/forks"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// Benchmarks at scale over catalogs made from the real one in testdata
// (527 tools of 70 servers): each server is copied under other names, as
// forks and republished copies of one server are in public registries,
// until the catalog has n tools. A copy keeps its tools as they are (a
// fork: same names and descriptions), or rewords the descriptions, or
// renames the tools to camelCase and drops some. Run with
//
//	go test -run '^$' -bench 'Scale' -benchtime 2000x ./catalog
//
// BenchmarkScaleIndex reports the time to store every server (s-put), to
// build the index from the file (ms-build), and, for a process that opens
// the file just stored, the time from Open to the end of its first search
// (ms-first-search); each also as the CPU time the process used meanwhile
// (-cpu), which a busy machine does not inflate as it does the wall clock:
// on a quiet machine with two cores the wall clock is at most the CPU time
// and at least half of it. BenchmarkScaleSearch reports the median, 95th and 99th
// percentile of a search over a mix of short queries, task sentences and
// requests of three needs, in wall clock (ms-) and in the CPU time of the
// searching thread (ms-cpu-; Linux only).

// realEntries reads testdata/catalog.jsonl into one entry per server.
func realEntries(tb testing.TB) []*Entry {
	f, err := os.Open(filepath.Join("testdata", "catalog.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	byServer := map[string]*Entry{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var t struct {
			Server, Name, Description string
			InputSchema               json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			tb.Fatal(err)
		}
		e := byServer[t.Server]
		if e == nil {
			e = &Entry{Server: t.Server, Hash: "scale", FetchedAt: time.UnixMilli(0)}
			byServer[t.Server] = e
			order = append(order, t.Server)
		}
		var schema any
		if len(t.InputSchema) > 0 {
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				tb.Fatal(err)
			}
		}
		e.Tools = append(e.Tools, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	out := make([]*Entry, len(order))
	for i, s := range order {
		out[i] = byServer[s]
	}
	return out
}

// scaleCatalog returns the real catalog's servers and copies of them, n
// tools in all (the last copy cut short), deterministically (see
// internal/testkit/forks).
func scaleCatalog(tb testing.TB, n int) []*Entry {
	var plain []forks.Tool
	var real []*mcp.Tool
	for _, e := range realEntries(tb) {
		for _, t := range e.Tools {
			plain = append(plain, forks.Tool{Server: e.Server, Name: t.Name, Description: t.Description})
			real = append(real, t)
		}
	}
	var out []*Entry
	for _, s := range forks.Scale(plain, n) {
		e := &Entry{Server: s.Name, Hash: "scale", FetchedAt: time.UnixMilli(0)}
		for _, c := range s.Tools {
			t := *real[c.Of]
			t.Name, t.Description = c.Name, c.Description
			e.Tools = append(e.Tools, &t)
		}
		out = append(out, e)
	}
	return out
}

// scaleQueries mix what agents send: short needs, names, task sentences
// (written for the benchmark), and, as slices of several, requests of
// several needs.
var scaleQueries = [][]string{
	{"create issue"}, {"stock price"}, {"readFile"}, {"weather forecast"}, {"文件搜索"}, {"upl"},
	{"git commit history"}, {"resolve-library-id"},
	{"Find the latest reviews of the new phone, compare the prices on two shops' sites and save a summary to /home/me/notes/phone.md"},
	{"What will the weather be in Lisbon next Friday, and how much is 300 dollars in euros there?"},
	{"Read the sales figures in /data/sales-2025.xlsx, work out the growth per quarter in percent and draw it as a bar chart"},
	{"search the web for news about the election", "current date", "write a file"},
	{"list pull requests", "send a message to the team channel", "create a calendar event"},
	{"translate text", "convert currency", "take a screenshot of a web page"},
}

type scaleLoaded struct {
	c                *Catalog
	dir, path        string
	put, firstSearch time.Duration // wall clock
	putCPU, firstCPU time.Duration // CPU time, all threads
}

// scaleKey is one scale catalog: its size, in SQLite or PostgreSQL.
type scaleKey struct {
	n  int
	pg bool
}

var scaleCatalogs = map[scaleKey]*scaleLoaded{}

// loadScale stores a scale catalog of n tools once per process, then
// times a fresh process's first search: open the file (or, in
// PostgreSQL, connect as another replica would), build the index, search.
func loadScale(b *testing.B, n int, pg bool) *scaleLoaded {
	key := scaleKey{n, pg}
	if l := scaleCatalogs[key]; l != nil {
		return l
	}
	var c *Catalog
	var dir, path, dsn string
	if pg {
		// The database outlives this benchmark: others reuse it.
		dsn = pgtest.DSN(outliving{b})
		c = openPostgresDSN(outliving{b}, dsn)
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "catalog-scale-"); err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(dir, "catalog.db")
		if c, err = Open(path); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	entries := scaleCatalog(b, n)
	start, cpu := time.Now(), cpuTime()
	for _, e := range entries {
		if err := c.Put(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	l := &scaleLoaded{c: c, dir: dir, path: path, put: time.Since(start), putCPU: cpuTime() - cpu}
	runtime.GC()
	start, cpu = time.Now(), cpuTime()
	var fresh *Catalog
	if pg {
		db, err := pgstore.Open(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if fresh, err = OpenPostgres(ctx, db, testStoreKey); err != nil {
			b.Fatal(err)
		}
	} else {
		var err error
		if fresh, err = Open(path); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := fresh.Search(ctx, "write a file", SearchOptions{}); err != nil {
		b.Fatal(err)
	}
	l.firstSearch, l.firstCPU = time.Since(start), cpuTime()-cpu
	fresh.Close()
	if _, err := c.currentIndex(ctx); err != nil {
		b.Fatal(err)
	}
	scaleCatalogs[key] = l
	return l
}

// outliving is a benchmark whose cleanups run when the test binary ends
// (see TestMain), not when the benchmark does.
type outliving struct{ testing.TB }

func (outliving) Cleanup(f func()) { atExit = append(atExit, f) }

// atExit holds the cleanups of outliving benchmarks, run last first.
var atExit []func()

// scaleRuns names the scale benchmarks' sub-benchmarks: SQLite's by size
// alone, as they always were, and PostgreSQL's under "postgres/".
func scaleRuns(b *testing.B, f func(b *testing.B, l func() *scaleLoaded)) {
	for _, pg := range []bool{false, true} {
		for _, n := range benchSizes {
			name := fmt.Sprintf("tools=%d", n)
			if pg {
				name = "postgres/" + name
			}
			b.Run(name, func(b *testing.B) { f(b, func() *scaleLoaded { return loadScale(b, n, pg) }) })
		}
	}
}

func BenchmarkScaleIndex(b *testing.B) {
	scaleRuns(b, func(b *testing.B, load func() *scaleLoaded) {
		l := load()
		ctx := context.Background()
		var build, buildCPU time.Duration
		for b.Loop() {
			start, cpu := time.Now(), cpuTime()
			if _, err := l.c.loadIndex(ctx); err != nil {
				b.Fatal(err)
			}
			build += time.Since(start)
			buildCPU += cpuTime() - cpu
		}
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		b.ReportMetric(ms(build)/float64(b.N), "ms-build")
		b.ReportMetric(ms(buildCPU)/float64(b.N), "ms-build-cpu")
		b.ReportMetric(l.put.Seconds(), "s-put")
		b.ReportMetric(l.putCPU.Seconds(), "s-put-cpu")
		b.ReportMetric(ms(l.firstSearch), "ms-first-search")
		b.ReportMetric(ms(l.firstCPU), "ms-first-search-cpu")
	})
}

func BenchmarkScaleSearch(b *testing.B) {
	scaleRuns(b, func(b *testing.B, load func() *scaleLoaded) {
		l := load()
		ctx := context.Background()
		// One thread, so that its CPU time is the search's: a busy
		// machine stretches the wall clock, not the CPU time.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var lat, cpu []time.Duration
		for i := 0; b.Loop(); i++ {
			start, c0 := time.Now(), threadCPUTime()
			if _, err := l.c.SearchAll(ctx, scaleQueries[i%len(scaleQueries)], SearchOptions{}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
			cpu = append(cpu, threadCPUTime()-c0)
		}
		b.StopTimer()
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		for _, m := range []struct {
			unit string
			ds   []time.Duration
		}{{"ms", lat}, {"ms-cpu", cpu}} {
			slices.Sort(m.ds)
			if m.ds[len(m.ds)-1] == 0 {
				continue // not measured on this platform
			}
			b.ReportMetric(ms(m.ds[len(m.ds)/2]), m.unit+"-median")
			b.ReportMetric(ms(m.ds[min(len(m.ds)-1, len(m.ds)*95/100)]), m.unit+"-p95")
			b.ReportMetric(ms(m.ds[min(len(m.ds)-1, len(m.ds)*99/100)]), m.unit+"-p99")
		}
	})
}

// TestParamTextOfMatchesParamText checks that the text of a decoded schema
// is that of its JSON, for every schema of the real catalog and odd shapes.
func TestParamTextOfMatchesParamText(t *testing.T) {
	var schemas []any
	for _, e := range realEntries(t) {
		for _, tool := range e.Tools {
			schemas = append(schemas, tool.InputSchema)
		}
	}
	for _, odd := range []string{`{"properties":{"a":true,"b":null,"c":{"description":3}}}`, `{"properties":[1]}`,
		`{"properties":{"a":{"items":[{"description":"x"}]}}}`, `{"properties":{"a":{"items":{"properties":{"b":{"description":"deep"}}}}}}`,
		`{"description":{"x":1},"properties":{"a":{"description":"y"}}}`, `{}`, `[]`, `"s"`} {
		var v any
		if err := json.Unmarshal([]byte(odd), &v); err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, v)
	}
	for _, v := range schemas {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := paramTextOf(v, b), paramText(b); got != want {
			t.Errorf("schema %s: paramTextOf = %q, paramText = %q", b, got, want)
		}
	}
}

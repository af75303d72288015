package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/testkit/forks"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// Benchmarks over generated catalogs of 1k, 10k and 100k tools. Run with
//
//	go test -run '^$' -bench . -benchtime 2000x ./catalog
//
// BenchmarkSearch reports the median and 99th percentile of one search
// (ms-median, ms-p99) over a mix of query kinds; BenchmarkLoad reports the
// time to Put every server (s-put), to build the index from the file
// (ms-build), the file's size (MB-disk) and the heap in use with the index
// loaded (MB-heap).

var benchSizes = []int{1_000, 10_000, 100_000}

// toolsPerServer is typical of real servers (5 to 50 tools).
const toolsPerServer = 40

var (
	verbs = strings.Fields(`get list create update delete search find read write fetch send run start stop
		query add remove set open close upload download convert generate analyze validate export import
		sync resolve describe watch cancel merge compare render translate summarize schedule`)
	nouns = strings.Fields(`file directory issue pull_request commit branch repository user account message
		channel email calendar event task project document page database table record query index image
		video audio chart report invoice payment customer order product price stock weather forecast
		location route map note memory entity relation package library version release build deployment
		container pod cluster secret token log metric alert ticket comment review label workflow job
		artifact dataset model embedding vector prompt template spreadsheet slide presentation form`)
	qualifiers = strings.Fields(`by_id by_name details history content metadata status summary list batch
		info stats recent latest all v2`)
	domains = strings.Fields(`github gitlab jira slack notion linear postgres mysql redis s3 gcs azure k8s
		docker stripe shopify salesforce hubspot zendesk figma sentry datadog grafana weather maps search
		browser filesystem memory calendar gmail drive sheets docs confluence airtable twilio openai`)
	adjectives = strings.Fields(`new existing recent selected given specified current remote local shared
		public private archived pending active`)
)

// genCatalog returns n tools spread over servers of toolsPerServer,
// deterministically.
func genCatalog(n int) []*Entry {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	var entries []*Entry
	for i := 0; i < n; i += toolsPerServer {
		server := fmt.Sprintf("%s-%s-%d", pick(domains), pick([]string{"mcp", "server", "tools", "api"}), i/toolsPerServer)
		e := &Entry{Server: server, Hash: "gen", FetchedAt: time.UnixMilli(0)}
		seen := map[string]bool{}
		for j := 0; j < toolsPerServer && i+j < n; j++ {
			verb, noun := pick(verbs), pick(nouns)
			name := verb + "_" + noun
			if rng.IntN(3) == 0 || seen[name] {
				name += "_" + pick(qualifiers)
			}
			for seen[name] {
				name += fmt.Sprint(j)
			}
			seen[name] = true
			if rng.IntN(4) == 0 { // some servers use camelCase
				name = forks.Camel(name)
			}
			desc := fmt.Sprintf("%s the %s %s in %s. Returns the %s %s and its %s; use it to %s a %s.",
				strings.ToUpper(verb[:1])+verb[1:], pick(adjectives), strings.ReplaceAll(noun, "_", " "),
				pick(domains), strings.ReplaceAll(noun, "_", " "), pick(qualifiers), pick(nouns), pick(verbs), pick(nouns))
			props := map[string]any{}
			for k := range 1 + rng.IntN(4) {
				p := pick(nouns) + "_" + pick([]string{"id", "name", "path", "limit", "query", "filter"})
				props[p] = map[string]any{"type": "string", "description": fmt.Sprintf("The %s %s (%d).", pick(adjectives), strings.ReplaceAll(p, "_", " "), k)}
			}
			e.Tools = append(e.Tools, &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object", "properties": props}})
		}
		entries = append(entries, e)
	}
	return entries
}

// benchQueries mixes the kinds of the development set.
var benchQueries = []string{
	"create issue", "stock price", "search the web for reviews and read the best article",
	"readFile", "get_weather_forecast", "文件搜索", "how many messages did the team send in the channel yesterday",
	"deploy container to cluster", "c++", "resolve-library-id", "pull request review comments", "gh.search",
	"convert the spreadsheet to a presentation and email it to the customer", "invoice", "upl",
}

type loaded struct {
	c                    *Catalog
	dir                  string
	put, build           time.Duration
	diskBytes, heapBytes uint64
}

var loadedCatalogs = map[int]*loaded{}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, l := range loadedCatalogs {
		l.c.Close()
		os.RemoveAll(l.dir)
	}
	for _, l := range scaleCatalogs {
		l.c.Close()
		os.RemoveAll(l.dir)
	}
	for i := len(atExit) - 1; i >= 0; i-- {
		atExit[i]()
	}
	pgtest.Stop()
	os.Exit(code)
}

// loadBench fills a catalog of n tools once per process.
func loadBench(b *testing.B, n int) *loaded {
	if l := loadedCatalogs[n]; l != nil {
		return l
	}
	dir, err := os.MkdirTemp("", "catalog-bench-")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "catalog.db")
	c, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	entries := genCatalog(n)
	start := time.Now()
	for _, e := range entries {
		if err := c.Put(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	l := &loaded{c: c, dir: dir, put: time.Since(start)}
	if _, err := c.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		l.diskBytes = uint64(fi.Size())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	if _, err := c.currentIndex(ctx); err != nil {
		b.Fatal(err)
	}
	l.build = time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	l.heapBytes = after.HeapAlloc
	loadedCatalogs[n] = l
	return l
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			l := loadBench(b, n)
			ctx := context.Background()
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if _, err := l.c.Search(ctx, benchQueries[i%len(benchQueries)], SearchOptions{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(lat[len(lat)/2]), "ms-median")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "ms-p99")
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			l := loadBench(b, n)
			ctx := context.Background()
			var build time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := l.c.loadIndex(ctx); err != nil {
					b.Fatal(err)
				}
				build += time.Since(start)
			}
			b.ReportMetric(float64(build)/1e6/float64(b.N), "ms-build")
			b.ReportMetric(l.put.Seconds(), "s-put")
			b.ReportMetric(float64(l.diskBytes)/(1<<20), "MB-disk")
			b.ReportMetric(float64(l.heapBytes)/(1<<20), "MB-heap")
		})
	}
}

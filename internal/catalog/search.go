package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// SearchOptions narrow and page a search. The zero value searches every
// server and returns the first DefaultLimit results.
type SearchOptions struct {
	Servers []string // only these servers; empty means all

	// Hashes, when not nil, holds the hash of each server's current
	// definition: only servers in it whose stored entry has that hash are
	// searched. The tools of an entry stored for an earlier definition are
	// never found; Results.Skipped names its server.
	Hashes map[string]string

	// Exclude holds tools, by server, that are not searched: the tools
	// quarantined by pinning, whose stored text is not the approved one.
	Exclude map[string][]string

	// Broken names servers that cannot run now (a failed connection, an
	// unset variable): among copies of a tool (see Result.Also) a copy on
	// a server not in it is listed, whatever their scores.
	Broken map[string]bool

	// Explain fills each Result's Why.
	Explain bool

	Limit  int  // at most this many results; 0 means DefaultLimit
	Offset int  // skip this many results first
	Regex  bool // the query is a regular expression (see Search)

	// Embedding is the query's vector, computed by Model: with it (and
	// without Regex) the search is hybrid, fusing the tools whose stored
	// vectors for Model are nearest with the lexical ranking (see Search).
	Embedding []float32
	Model     string

	// Embeddings are the vectors of the queries of SearchAll, one per
	// query (by Model), for a hybrid search of each.
	Embeddings [][]float32
}

// DefaultLimit is the number of results of a search without a Limit.
const DefaultLimit = 10

// Match says why a result matched, strongest first.
type Match string

const (
	MatchExact  Match = "exact"  // the query is the tool's name, or server and name
	MatchPrefix Match = "prefix" // the tool's name starts with the query
	MatchText   Match = "text"   // words of the query occur in the tool's text
	MatchRegex  Match = "regex"  // the pattern matches the name or description

	// MatchSemantic is a tool found by meaning alone (hybrid search): its
	// vector is near the query's, but no word of the query is in its text.
	MatchSemantic Match = "semantic"
)

// Result is one tool found by a search.
type Result struct {
	Server      string
	Name        string
	Title       string
	Description string // the description's first line, shortened
	Score       float64
	Match       Match

	// Need is the index of the query (of SearchAll) the tool answers; 0
	// for Search.
	Need int
	// Implied names the capability the query implies that the tool
	// serves, such as "write a file"; empty when it serves the query's
	// own words.
	Implied string
	// Also names, sorted, the other servers that offer the same tool (same
	// name, and the same description or one reworded a little: see
	// nearDupMinTerms), which the search lists only once.
	Also []string

	// Why says, with SearchOptions.Explain, what placed the tool: which
	// fields its query's words matched, and which understanding steps
	// (the query's action, its server's topic, the copy that works, an
	// implied need) raised or lowered it.
	Why []string
}

// Results is one page of a search.
type Results struct {
	Results []Result
	Total   int // matches before paging

	// Hybrid reports that the ranking fused the semantic one in: false
	// for a lexical search, and for one with an Embedding that no stored
	// vector for Model can be compared with.
	Hybrid bool

	// Skipped names, sorted, the servers of SearchOptions.Hashes (and
	// Servers, when given) that were not searched: the catalog holds no
	// entry for their current definition.
	Skipped []string
}

// Search finds the stored tools that best serve query.
//
// The query is free text: any string is valid and none is an error. Words
// are matched, stemmed and expanded with related words, against each tool's
// name (split on case changes, _, -, . and digits), server name, title and
// description, parameter names and descriptions, and searchKeywords;
// unknown words also match as prefixes of known ones. Chinese, Japanese and
// Korean text is matched by characters and character pairs. A tool whose
// name is the query (compared ignoring case and punctuation: readFile finds
// read_file; github.search finds the server's search) ranks first, then one
// whose name starts with it, then the rest by score. Ties are broken by
// server, then tool name, so results are deterministic.
//
// With opts.Embedding the search is hybrid: the tools whose vectors (stored
// by PutEmbeddings for opts.Model) are nearest the query's by cosine
// similarity are ranked too, and the two rankings are fused by reciprocal
// rank fusion. Exact and prefix name matches still rank first, and tools
// without a vector take part by their lexical rank alone. When no stored
// vector has the query's dimensions the search is lexical (Results.Hybrid
// says which ran).
//
// With opts.Regex the query is a regular expression (RE2 syntax,
// case-insensitive unless it says otherwise with (?-i)) matched against each
// tool's name, server/name and description; name matches come first. An
// invalid pattern is an error that says what is wrong with it.
func (c *Catalog) Search(ctx context.Context, query string, opts SearchOptions) (Results, error) {
	return c.SearchAll(ctx, []string{query}, opts)
}

// pageBounds returns the bounds of the requested page among n results.
func pageBounds(n int, opts SearchOptions) (lo, hi int) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	lo = min(max(opts.Offset, 0), n)
	return lo, min(lo+limit, n)
}

// currentIndex returns the index of the catalog as it is now, rebuilding it
// if any process changed the catalog since it was built.
func (c *Catalog) currentIndex(ctx context.Context) (*index, error) {
	gen, err := c.generation(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index != nil && c.index.gen == gen {
		return c.index, nil
	}
	ix, err := c.loadIndex(ctx)
	if err != nil {
		return nil, err
	}
	c.index = ix
	return ix, nil
}

// loadIndex reads every tool and its generation in one transaction and
// indexes them.
func (c *Catalog) loadIndex(ctx context.Context) (*index, error) {
	tx, err := c.db.BeginTx(ctx, c.d.readTx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var gen int64
	if err := tx.QueryRowContext(ctx, c.d.q("SELECT value FROM generation WHERE id = 1")).Scan(&gen); err != nil {
		return nil, err
	}
	keywords := map[string]map[string][]string{}
	hashes := map[string]string{}
	rows, err := tx.QueryContext(ctx, c.d.q("SELECT name, hash, keywords FROM servers"))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name, hash, kw string
		if err := rows.Scan(&name, &hash, &kw); err != nil {
			rows.Close()
			return nil, err
		}
		hashes[name] = hash
		var m map[string][]string
		if kw != "{}" && json.Unmarshal([]byte(kw), &m) == nil {
			keywords[name] = m
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, c.d.q("SELECT server, name, title, description, params, COALESCE(annotations, '') FROM tools"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var docs []toolDoc
	for rows.Next() {
		var d toolDoc
		if err := rows.Scan(&d.Server, &d.Name, &d.Title, &d.Description, &d.Params, &d.Annotations); err != nil {
			return nil, err
		}
		d.Keywords = keywordsFor(keywords[d.Server], d.Name)
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ix := buildIndex(gen, docs)
	ix.hashes = hashes
	return ix, nil
}

// Query term weights by where the term came from.
const (
	weightGloss  = 0.8 // an English word for a Chinese one in the query
	weightPrefix = 0.5 // a known word that an unknown query word starts
	prefixLimit  = 8   // known words one unknown query word expands to
)

// queryTerms turns an understood query into weighted terms: its words at
// weight 1 (request words in a long query at weightRequest), the words of
// their synonym groups, prefix expansions of unknown words, the names'
// words its neighbouring words make together (see compounds), English
// words for Chinese ones, and the hints of the things it names.
func (ix *index) queryTerms(q query) map[string]float64 {
	qt := map[string]float64{}
	put := func(t string, w float64) {
		if w > qt[t] {
			qt[t] = w
		}
	}
	for _, w := range words(q.text) {
		if stopwords()[w] {
			continue
		}
		t := stem(w)
		base := 1.0
		if q.long && requestWords()[t] {
			base = weightRequest
		}
		put(t, base)
		for _, x := range defaultThesaurus()[t] {
			put(x, base*expansionWeight)
		}
		if _, known := ix.postings[t]; !known && len(w) >= 3 && !isCJK([]rune(w)[0]) {
			for _, x := range ix.withPrefix(w, prefixLimit) {
				put(x, base*weightPrefix)
			}
		}
	}
	for t, x := range ix.compounds(q.text) {
		if _, ok := qt[t]; !ok {
			put(t, x)
		}
	}
	for _, t := range defaultGlossary().english(q.text) {
		put(t, weightGloss)
		for _, x := range defaultThesaurus()[t] {
			put(x, expansionWeight*weightGloss)
		}
	}
	for t, w := range q.hints {
		put(t, w)
		for _, x := range defaultThesaurus()[t] {
			put(x, expansionWeight*w)
		}
	}
	return qt
}

// scratch is reusable per-search memory.
type scratch struct {
	score   []float32
	tier    []int8
	touched []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// cand is a matching document, compact for ranking.
type cand struct {
	doc   int32
	tier  int8
	score float32
}

// before reports whether a ranks above b: by tier, then score, then
// document order, which is server then name (see buildIndex).
func (a cand) before(b cand) bool {
	if a.tier != b.tier {
		return a.tier > b.tier
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// lexical returns every document of the allowed servers (nil: all) that
// matches q, unordered; raw is the query as written, for name matches.
func (ix *index) lexical(raw string, q query, allow *scope) []cand {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if len(s.score) < len(ix.docs) {
		s.score = make([]float32, len(ix.docs))
		s.tier = make([]int8, len(ix.docs))
	}
	s.touched = s.touched[:0]
	touch := func(d int32) {
		if s.tier[d] == 0 {
			s.tier[d] = 1
			s.touched = append(s.touched, d)
		}
	}
	// Terms in a fixed order: float32 sums in map order would differ in
	// the last bits from one search to the next.
	qt := ix.queryTerms(q)
	for _, t := range slices.Sorted(maps.Keys(qt)) {
		w := qt[t]
		for _, p := range ix.postings[t] {
			touch(p.doc)
			s.score[p.doc] += float32(w) * p.w
		}
	}
	ix.markNames(raw, s, touch)

	cands := make([]cand, 0, len(s.touched))
	for _, d := range s.touched {
		if h := &ix.docs[d]; allow.has(h) {
			f, _ := polarityOf(q.action, q.actions, q.long, h.act)
			cands = append(cands, cand{doc: d, tier: s.tier[d], score: s.score[d] * float32(f)})
		}
		s.score[d], s.tier[d] = 0, 0
	}
	return cands
}

// topN returns the best n of cands, best first; it reorders cands.
func topN(cands []cand, n int) []cand {
	less := func(a, b cand) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	}
	if n <= 0 {
		return nil
	}
	if n >= len(cands)/4 {
		slices.SortFunc(cands, less)
		return cands[:n]
	}
	// Keep the best n in a heap whose root is the worst of them.
	h := cands[:0:0]
	h = append(h, cands[:n]...)
	heapify(h)
	for _, c := range cands[n:] {
		if c.before(h[0]) {
			h[0] = c
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, less)
	return h
}

// heapify and siftDown keep h a heap with the worst candidate at the root.
func heapify(h []cand) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

func siftDown(h []cand, i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[worst].before(h[l]) {
			worst = l
		}
		if r < len(h) && h[worst].before(h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

var tierMatch = [...]Match{1: MatchText, 2: MatchPrefix, 3: MatchExact}
var matchTier = map[Match]int{MatchText: 1, MatchPrefix: 2, MatchExact: 3, MatchRegex: 1, MatchSemantic: 1}

// markNames raises the tier of tools named by the query: exactly (3) or by
// prefix (2), after folding case and punctuation.
func (ix *index) markNames(query string, s *scratch, touch func(int32)) {
	q := normName(query)
	if q == "" {
		return
	}
	raise := func(d int32, t int8) {
		touch(d)
		s.tier[d] = max(s.tier[d], t)
	}
	if utf8.RuneCountInString(q) >= 3 {
		ix.namePrefixed(q, func(d int32) { raise(d, 2) })
	}
	for _, d := range ix.names[q] {
		raise(d, 3)
	}
}

func sortResults(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int {
		if c := cmp.Compare(matchTier[b.Match], matchTier[a.Match]); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// scope is what a search covers: the tools of some servers, less some
// tools. A nil scope covers every tool.
type scope struct {
	servers map[string]bool            // nil: all
	exclude map[string]map[string]bool // by server, tool names
	broken  map[string]bool            // servers that cannot run now (SearchOptions.Broken)
}

// works reports whether a tool's server can run now, as far as the scope
// knows.
func (s *scope) works(h *hit) bool { return s == nil || !s.broken[h.server] }

// has reports whether the scope covers a tool.
func (s *scope) has(h *hit) bool {
	if s == nil {
		return true
	}
	if s.servers != nil && !s.servers[h.server] {
		return false
	}
	return !s.exclude[h.server][h.name]
}

// allowed returns what a search covers; nil means all.
func (ix *index) allowed(opts SearchOptions) *scope {
	allow := serverSet(opts.Servers)
	if opts.Hashes != nil {
		current := map[string]bool{}
		for server, hash := range opts.Hashes {
			if stored, ok := ix.hashes[server]; ok && stored == hash && (allow == nil || allow[server]) {
				current[server] = true
			}
		}
		allow = current
	}
	if allow == nil && len(opts.Exclude) == 0 && len(opts.Broken) == 0 {
		return nil
	}
	s := &scope{servers: allow, broken: opts.Broken}
	for server, tools := range opts.Exclude {
		if s.exclude == nil {
			s.exclude = map[string]map[string]bool{}
		}
		s.exclude[server] = map[string]bool{}
		for _, t := range tools {
			s.exclude[server][t] = true
		}
	}
	return s
}

// skipped returns the servers of opts.Hashes (and opts.Servers) whose
// stored entry is not that of their current definition, sorted.
func (ix *index) skipped(opts SearchOptions) []string {
	allow := serverSet(opts.Servers)
	var out []string
	for server, hash := range opts.Hashes {
		if stored, ok := ix.hashes[server]; (!ok || stored != hash) && (allow == nil || allow[server]) {
			out = append(out, server)
		}
	}
	slices.Sort(out)
	return out
}

func serverSet(servers []string) map[string]bool {
	if len(servers) == 0 {
		return nil
	}
	m := make(map[string]bool, len(servers))
	for _, s := range servers {
		m[s] = true
	}
	return m
}

func (h *hit) result(score float64, m Match) Result {
	return Result{Server: h.server, Name: h.name, Title: h.title, Description: headline(h.description), Score: score, Match: m}
}

// headlineLen bounds a result's description, in runes.
const headlineLen = 160

// headline returns the first line of a description, cut at headlineLen
// runes with an ellipsis.
func headline(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if utf8.RuneCountInString(s) <= headlineLen {
		return s
	}
	rs := []rune(s)
	return strings.TrimSpace(string(rs[:headlineLen-1])) + "…"
}

package catalog

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Several needs per search. A task needs several tools; searching it as one
// bag of words lets the need with the most words (or the most common ones)
// take every place. SearchAll ranks each need on its own and fuses the
// rankings by turns, so that every need gets its share of the places; the
// capabilities a query implies (see intentTable) are needs too, with a
// smaller share.

// Shares of the places: each query's need counts 1, an implied one half,
// and an implied need places at most maxImplied tools (one good helper is
// enough; two give an alternative).
const (
	shareImplied = 0.5
	maxImplied   = 2
)

// SearchAll finds the stored tools that best serve each of queries, one
// need per query, and fuses the rankings so that each need gets its share
// of the results (turn by turn, best first). Each Result says which query
// it answers (Result.Need) and, for a helper a query implies rather than
// names (a file write for "save it to /tmp/x.md", today's date for "next
// Friday"), which capability (Result.Implied). A tool found by several
// needs is listed once, for the first need that placed it. See Search for
// how each query is matched; opts apply to every query, and
// opts.Embeddings, when it has one vector per query, makes each need's
// search hybrid. No query may be empty.
func (c *Catalog) SearchAll(ctx context.Context, queries []string, opts SearchOptions) (Results, error) {
	if len(queries) == 0 {
		return Results{}, fmt.Errorf("searching the catalog: no query")
	}
	var res []*regexp.Regexp
	if opts.Regex {
		for _, q := range queries {
			re, err := regexp.Compile("(?i)" + q)
			if err != nil {
				return Results{}, fmt.Errorf("invalid regex %q: %w", q, err)
			}
			res = append(res, re)
		}
	}
	ix, err := c.currentIndex(ctx)
	if err != nil {
		return Results{}, fmt.Errorf("searching the catalog: %w", err)
	}
	var vv *vectorView
	if opts.Regex {
		// no vectors
	} else if len(opts.Embedding) > 0 || len(opts.Embeddings) > 0 {
		// Vectors that cannot be read make the search lexical, not fail.
		vv, _ = c.currentVectors(ctx, ix, opts.Model)
	}
	out := ix.searchAll(queries, res, opts, vv)
	out.Skipped = ix.skipped(opts)
	return out, nil
}

// needList is one need's ranking.
type needList struct {
	need    int    // the query it answers
	implied string // the capability, for an implied need
	share   float64
	cap     int // at most this many places; 0: no bound
	list    []ranked
}

// ranked is a tool in a need's ranking.
type ranked struct {
	doc   int32
	score float64
	match Match
}

// searchAll ranks every need and fuses the rankings into one page.
func (ix *index) searchAll(queries []string, res []*regexp.Regexp, opts SearchOptions, vv *vectorView) Results {
	allow := ix.allowed(opts)
	lo, hi := pageBounds(1<<30, opts)
	var lists, implied []needList
	var understood []query // by need, with opts.Explain
	seenImplied := map[string]bool{}
	union := newDocSet(len(ix.docs))
	hybrid := false
	for i, raw := range queries {
		nl := needList{need: i, share: 1}
		if res != nil {
			nl.list = ix.rankRegex(res[i], allow, union)
			lists = append(lists, nl)
			continue
		}
		q := understand(raw)
		if opts.Explain {
			understood = append(understood, q)
		}
		emb := opts.Embedding
		if len(opts.Embeddings) == len(queries) {
			emb = opts.Embeddings[i]
		} else if len(queries) > 1 {
			emb = nil
		}
		var h bool
		nl.list, h = ix.rankQuery(raw, q, emb, vv, allow, hi, union)
		hybrid = hybrid || h
		lists = append(lists, nl)
		for _, in := range q.implied {
			if seenImplied[in.label] {
				continue
			}
			seenImplied[in.label] = true
			l, _ := ix.rankQuery("", query{text: in.text}, nil, nil, allow, maxImplied, nil)
			implied = append(implied, needList{need: i, implied: in.label, share: shareImplied, cap: maxImplied, list: l})
		}
	}
	placed := ix.fuse(append(lists, implied...), hi)
	total := union.n
	for _, p := range placed {
		if !union.has(p.doc) {
			total++
		}
	}
	lo = min(lo, len(placed))
	out := Results{Total: total, Hybrid: hybrid, Results: make([]Result, 0, len(placed)-lo)}
	for _, p := range placed[lo:] {
		r := ix.docs[p.doc].result(p.score, p.match)
		r.Need, r.Implied = p.need, p.implied
		r.Also = ix.also(p.doc, allow)
		if opts.Explain && p.need < len(understood) {
			r.Why = ix.explain(understood[p.need], p, allow)
		}
		out.Results = append(out.Results, r)
	}
	return out
}

// placedResult is a tool given a place by fuse.
type placedResult struct {
	ranked
	need    int
	implied string
}

// fuse gives n places to the needs' rankings in turns: each place goes to
// the need with the fewest places for its share (ties to the earlier
// need), which places its best tool not placed yet. A tool (or a
// duplicate of it, see also) is placed once.
func (ix *index) fuse(lists []needList, n int) []placedResult {
	taken := make([]int, len(lists))
	next := make([]int, len(lists))
	placed := map[int32]bool{}
	var out []placedResult
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if l.cap > 0 && taken[i] >= l.cap {
				continue
			}
			for next[i] < len(l.list) && placed[ix.dupKey(l.list[next[i]].doc)] {
				next[i]++
			}
			if next[i] >= len(l.list) {
				continue
			}
			if best < 0 || float64(taken[i]+1)/l.share < float64(taken[best]+1)/lists[best].share {
				best = i
			}
		}
		if best < 0 {
			break
		}
		r := lists[best].list[next[best]]
		placed[ix.dupKey(r.doc)] = true
		taken[best]++
		next[best]++
		out = append(out, placedResult{ranked: r, need: lists[best].need, implied: lists[best].implied})
	}
	return out
}

// rankQuery ranks the tools for one understood query (raw is the query as
// written, for name matches; "" for an implied need): the best n, best
// first, duplicates collapsed. union, when not nil, collects every match.
func (ix *index) rankQuery(raw string, q query, emb []float32, vv *vectorView, allow *scope, n int, union *docSet) ([]ranked, bool) {
	lex := ix.collapse(ix.lexical(raw, q, allow), allow)
	if union != nil {
		for _, c := range lex {
			union.add(c.doc)
		}
	}
	if len(emb) > 0 && vv != nil {
		if fused, ok := ix.fuseHybrid(lex, emb, vv, allow); ok {
			if union != nil {
				for _, f := range fused {
					union.add(f.doc)
				}
			}
			out := make([]ranked, 0, min(n, len(fused)))
			for _, f := range bestFused(fused, min(n, len(fused))) {
				m := tierMatch[f.tier]
				if f.semantic {
					m = MatchSemantic
				}
				out = append(out, ranked{doc: f.doc, score: f.fused, match: m})
			}
			return out, true
		}
	}
	top := topN(lex, min(n, len(lex)))
	out := make([]ranked, 0, len(top))
	for _, c := range top {
		out = append(out, ranked{doc: c.doc, score: float64(c.score), match: tierMatch[c.tier]})
	}
	return out, false
}

// rankRegex ranks the tools a pattern matches: name matches first.
func (ix *index) rankRegex(re *regexp.Regexp, allow *scope, union *docSet) []ranked {
	var cands []cand
	for i := range ix.docs {
		h := &ix.docs[i]
		if !allow.has(h) {
			continue
		}
		switch {
		case re.MatchString(h.name) || re.MatchString(h.server+"/"+h.name):
			cands = append(cands, cand{doc: int32(i), tier: 2, score: 2})
		case re.MatchString(h.title) || re.MatchString(h.description):
			cands = append(cands, cand{doc: int32(i), tier: 1, score: 1})
		}
	}
	cands = ix.collapse(cands, allow)
	slices.SortFunc(cands, func(a, b cand) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	out := make([]ranked, len(cands))
	for i, c := range cands {
		union.add(c.doc)
		out[i] = ranked{doc: c.doc, score: float64(c.score), match: MatchRegex}
	}
	return out
}

// Duplicates. Forks and copies of one server offer the same tool (same
// name, and the same description or one reworded a little: "Fork: …",
// "(community edition) …") under several server names; in a large catalog
// they would fill the results with one capability. A search lists each
// such tool once, at its best-ranked copy, naming the servers of the others
// (Result.Also).

// dupKey identifies a tool up to duplicates: its group, or itself.
func (ix *index) dupKey(doc int32) int32 {
	if g := ix.dupOf[doc]; g >= 0 {
		return -1 - g
	}
	return doc
}

// Near duplicates: two tools of the same name (folded) are copies when
// their descriptions are the same, or when both have at least
// nearDupMinTerms words and the longer one holds all but a tenth of the
// shorter one's words (as terms, each counted once) and adds at most one
// word for every nearDupPerExtra of them: a reworded copy adds a remark
// to a description of some length, not a capability. A few words added
// to a short description are what tells two tools apart ("Read the
// contents of a file." and "… on a remote SFTP server."). Shorter
// descriptions ("Search.") must be the same.
const (
	nearDupMinTerms = 3
	nearDupPerExtra = 4
)

// buildDups groups the documents that share a name (folded) and a
// non-empty description, the same or nearly (see above). analysed holds
// each document's terms, norms its folded name.
func (ix *index) buildDups(analysed []fieldTerms, norms []string) {
	ix.dupOf = make([]int32, len(ix.docs))
	byName := map[string]int{} // folded name → bucket
	var buckets [][]int32
	for i := range ix.docs {
		ix.dupOf[i] = -1
		h := &ix.docs[i]
		if strings.TrimSpace(h.description) == "" {
			continue
		}
		key := norms[i]
		b, ok := byName[key]
		if !ok {
			b = len(buckets)
			byName[key] = b
			buckets = append(buckets, nil)
		}
		buckets[b] = append(buckets[b], int32(i))
	}
	type cluster struct {
		desc  string
		terms []uint64 // sorted, each once; nil until needed
		docs  []int32
	}
	var clusters []cluster
	for _, bucket := range buckets {
		if len(bucket) < 2 {
			continue
		}
		clusters = clusters[:0]
		for _, d := range bucket {
			desc := strings.TrimSpace(ix.docs[d].description)
			var terms []uint64
			joined := false
			for k := range clusters {
				c := &clusters[k]
				if c.desc != desc {
					if terms == nil {
						terms = termSet(analysed[d][fieldText])
					}
					if c.terms == nil {
						c.terms = termSet(analysed[c.docs[0]][fieldText])
					}
					if !nearDuplicate(terms, c.terms) {
						continue
					}
				}
				c.docs = append(c.docs, d)
				joined = true
				break
			}
			if !joined {
				clusters = append(clusters, cluster{desc: desc, terms: terms, docs: []int32{d}})
			}
		}
		for _, c := range clusters {
			if len(c.docs) < 2 {
				continue
			}
			g := int32(len(ix.dupGroups))
			ix.dupGroups = append(ix.dupGroups, c.docs)
			for _, d := range c.docs {
				ix.dupOf[d] = g
			}
		}
	}
}

// termSet returns the hashes of ts (FNV-1a), sorted, each once: sets to
// compare, at the cost of a collision once in billions of pairs.
func termSet(ts []string) []uint64 {
	out := make([]uint64, len(ts))
	for i, t := range ts {
		h := uint64(14695981039346656037)
		for j := 0; j < len(t); j++ {
			h = (h ^ uint64(t[j])) * 1099511628211
		}
		out[i] = h
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// nearDuplicate reports whether two descriptions' term sets (see
// termSet) are near duplicates (see nearDupMinTerms).
func nearDuplicate(a, b []uint64) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < nearDupMinTerms {
		return false
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 10*(len(a)-common) <= len(a) && len(b)-common <= len(a)/nearDupPerExtra
}

// copies returns how many documents are copies of another (all but one
// of each group).
func (ix *index) copies() int {
	n := 0
	for _, g := range ix.dupGroups {
		n += len(g) - 1
	}
	return n
}

// collapse keeps the best candidate of each group of duplicates: the
// best-ranked copy on a server that can run (see scope.works), else the
// best-ranked copy.
func (ix *index) collapse(cands []cand, allow *scope) []cand {
	if len(ix.dupGroups) == 0 {
		return cands
	}
	at := groupPool.Get().(*[]int32) // group → 1 + its index in out; 0: none yet
	if len(*at) < len(ix.dupGroups) {
		*at = make([]int32, len(ix.dupGroups))
	}
	best := *at
	out := cands[:0]
	for _, c := range cands {
		g := ix.dupOf[c.doc]
		if g < 0 {
			out = append(out, c)
			continue
		}
		if j := best[g]; j > 0 {
			if ix.betterCopy(c, out[j-1], allow) {
				out[j-1] = c
			}
			continue
		}
		out = append(out, c)
		best[g] = int32(len(out))
	}
	for _, c := range out {
		if g := ix.dupOf[c.doc]; g >= 0 {
			best[g] = 0
		}
	}
	groupPool.Put(at)
	return out
}

// betterCopy reports whether copy a of a tool is to be listed rather than
// copy b: one that can run beats one that cannot, then the better ranked.
func (ix *index) betterCopy(a, b cand, allow *scope) bool {
	if wa, wb := allow.works(&ix.docs[a.doc]), allow.works(&ix.docs[b.doc]); wa != wb {
		return wa
	}
	return a.before(b)
}

// groupPool holds collapse's per-group memory, all zero between uses.
var groupPool = sync.Pool{New: func() any { return new([]int32) }}

// also returns the servers of a tool's duplicates other than its own,
// among the allowed ones, sorted.
func (ix *index) also(doc int32, allow *scope) []string {
	g := ix.dupOf[doc]
	if g < 0 {
		return nil
	}
	var out []string
	for _, d := range ix.dupGroups[g] {
		if d != doc && allow.has(&ix.docs[d]) {
			out = append(out, ix.docs[d].server)
		}
	}
	slices.Sort(out)
	return out
}

// docSet is a set of documents.
type docSet struct {
	in []bool
	n  int
}

func newDocSet(n int) *docSet { return &docSet{in: make([]bool, n)} }

func (s *docSet) add(d int32) {
	if s != nil && !s.in[d] {
		s.in[d] = true
		s.n++
	}
}

func (s *docSet) has(d int32) bool { return s.in[d] }

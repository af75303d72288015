package catalog

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The search index: a BM25F inverted index over every stored tool, held in
// memory. Each tool is a document with these fields, weighted and length-
// normalised separately, then combined before saturation (Robertson and
// Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", §3.5).
const (
	fieldName     = iota // the tool's name, split into words
	fieldServer          // the server's name
	fieldText            // title and description
	fieldParams          // input schema property names and descriptions
	fieldKeywords        // searchKeywords from the configuration
	fieldGloss           // English words for Chinese text (see cjkGlossary)
	fieldTopic           // its server's topic (see serverTopics)
	numFields
)

// fieldWeight and fieldB are each field's weight and length normalisation.
var (
	fieldWeight = [numFields]float64{fieldName: 3, fieldServer: 1.5, fieldText: 1, fieldParams: 0.3, fieldKeywords: 2, fieldGloss: 0.6, fieldTopic: 0.2}
	fieldB      = [numFields]float64{fieldName: 0.5, fieldServer: 0.3, fieldText: 0.75, fieldParams: 0.75, fieldKeywords: 0.5, fieldGloss: 0.75, fieldTopic: 0.3}
)

// bm25K1 saturates a term's combined frequency.
const bm25K1 = 1.2

// toolDoc is one tool as the index reads it.
type toolDoc struct {
	Server, Name, Title, Description string
	Params                           string   // see paramText
	Keywords                         []string // extra words
	Annotations                      string   // stored JSON of the tool's annotations
}

// hit is one indexed tool, with what a result line needs, and the hash of
// its embedding text (see embedText) to find its vector.
type hit struct {
	server, name, title, description string
	thash                            textHash
	act                              toolAct // what it does (see toolAction)
}

// posting is one document containing a term and the term's precomputed
// BM25F contribution there.
type posting struct {
	doc int32
	w   float32
}

// index is immutable once built.
type index struct {
	gen      int64             // the catalog generation it was built from
	hashes   map[string]string // each stored server's definition hash
	docs     []hit
	postings map[string][]posting
	vocab    []string // every term, sorted, for prefix expansion

	// Names folded by normName, for exact and prefix name matches: the
	// tool's name alone, and server name + tool name.
	names      map[string][]int32
	namesOrder []nameRef // sorted by norm

	// Duplicates (see buildDups): each document's group, or -1, and each
	// group's documents.
	dupOf     []int32
	dupGroups [][]int32

	topics map[string][]string // each server's topic terms (see serverTopics)

	// nameWords holds the words of tool and server names, lower case and
	// not stemmed (see compounds).
	nameWords map[string]bool
}

type nameRef struct {
	norm string
	doc  int32
}

// fieldTerms is one document's analysed fields.
type fieldTerms [numFields][]string

// analyze analyses one document; stems caches the stems of words seen
// before (a catalog's tools share most of their words).
// nameWords, when not nil, collects the words of its name and server (see
// index.nameWords).
func analyze(d *toolDoc, stems map[string]string, nameWords map[string]bool) fieldTerms {
	var f fieldTerms
	f[fieldName] = termsCached(d.Name, stems, nameWords)
	f[fieldServer] = termsCached(d.Server, stems, nameWords)
	text := d.Title + " " + d.Description
	f[fieldText] = termsCached(text, stems, nil)
	f[fieldParams] = termsCached(d.Params, stems, nil)
	f[fieldKeywords] = termsCached(strings.Join(d.Keywords, " "), stems, nil)
	f[fieldGloss] = defaultGlossary().english(text)
	return f
}

// buildIndex indexes docs. It sorts them by server and name, so that
// document order breaks ties between equal scores.
func buildIndex(gen int64, docs []toolDoc) *index {
	slices.SortStableFunc(docs, func(a, b toolDoc) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Name, b.Name))
	})
	ix := &index{gen: gen, docs: make([]hit, len(docs)), postings: map[string][]posting{}, names: map[string][]int32{}}
	var analysed []fieldTerms
	analysed, ix.nameWords = analyzeAll(docs, ix.docs)
	ix.topics = serverTopics(docs, analysed)
	var avg [numFields]float64
	norms := make([]string, len(docs)) // folded names
	for i := range docs {
		d := &docs[i]
		for f := range numFields {
			avg[f] += float64(len(analysed[i][f]))
		}
		norms[i] = normName(d.Name)
		ix.addName(norms[i], int32(i))
		ix.addName(normName(d.Server)+norms[i], int32(i))
	}
	for f := range numFields {
		avg[f] = max(avg[f]/float64(max(len(docs), 1)), 1)
	}
	tf := map[string]float64{}
	for i, ft := range analysed {
		clear(tf)
		for f, ts := range ft {
			norm := 1 - fieldB[f] + fieldB[f]*float64(len(ts))/avg[f]
			for _, t := range ts {
				tf[t] += fieldWeight[f] / norm
			}
		}
		for t, x := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), w: float32(x)})
		}
	}
	ix.buildDups(analysed, norms)
	// Copies of a server count once in a term's document frequency: ten
	// forks of one server do not make its words ten times as common, and
	// a tool's own words would otherwise weigh less for having copies.
	n := float64(len(docs) - ix.copies())
	ix.vocab = make([]string, 0, len(ix.postings))
	lastTerm := make([]int32, len(ix.dupGroups)) // group → 1 + the last term that counted it
	for ti, t := range slices.Sorted(maps.Keys(ix.postings)) {
		ps := ix.postings[t]
		ix.vocab = append(ix.vocab, t)
		df := 0.0
		for _, p := range ps {
			if g := ix.dupOf[p.doc]; g >= 0 {
				if lastTerm[g] == int32(ti+1) {
					continue
				}
				lastTerm[g] = int32(ti + 1)
			}
			df++
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for j := range ps {
			x := float64(ps[j].w)
			ps[j].w = float32(idf * x * (bm25K1 + 1) / (x + bm25K1))
		}
	}
	slices.SortFunc(ix.namesOrder, func(a, b nameRef) int { return strings.Compare(a.norm, b.norm) })
	return ix
}

// A tool inherits its server's topic. A server's tools share what it is
// about ("the knowledge graph", "files"), but a terse tool may not say it:
// read_graph's "Read the entire knowledge graph" never says that the graph
// holds entities and their observations, which its siblings do. So each
// tool of a server with several tools gets a weak field with the words that
// at least half of the server's tools use in their names and descriptions
// (at most topicTerms of them, the most shared first), and the server's
// name.
const (
	topicMinTools = 3 // a server with fewer tools has no shared topic
	topicTerms    = 8
)

// serverTopics fills each document's fieldTopic, and returns each
// server's topic; docs are sorted by server.
func serverTopics(docs []toolDoc, analysed []fieldTerms) map[string][]string {
	topics := map[string][]string{}
	count := map[string]int{}
	seen := map[string]bool{}
	for lo := 0; lo < len(docs); {
		hi := lo + 1
		for hi < len(docs) && docs[hi].Server == docs[lo].Server {
			hi++
		}
		if n := hi - lo; n >= topicMinTools {
			clear(count)
			for i := lo; i < hi; i++ {
				clear(seen)
				for _, f := range []int{fieldName, fieldText} {
					for _, t := range analysed[i][f] {
						if !seen[t] {
							seen[t] = true
							count[t]++
						}
					}
				}
			}
			topic := sharedTerms(count, n)
			topic = append(topic, analysed[lo][fieldServer]...)
			for i := lo; i < hi; i++ {
				analysed[i][fieldTopic] = topic
			}
			topics[docs[lo].Server] = topic
		}
		lo = hi
	}
	return topics
}

// sharedTerms returns the terms counted in at least half of n tools, the
// most shared first (ties by term), at most topicTerms.
func sharedTerms(count map[string]int, n int) []string {
	var out []string
	for t, c := range count {
		if 2*c >= n {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), strings.Compare(a, b)) })
	return out[:min(len(out), topicTerms)]
}

// analyzeAll analyses docs and fills hits, one share of the documents per
// processor: analysis is most of the time an index takes to build.
func analyzeAll(docs []toolDoc, hits []hit) ([]fieldTerms, map[string]bool) {
	analysed := make([]fieldTerms, len(docs))
	workers := min(runtime.GOMAXPROCS(0), max(len(docs)/256, 1))
	nameWords := make([]map[string]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		nameWords[w] = map[string]bool{}
		wg.Go(func() {
			var buf []byte
			stems := map[string]string{}
			for i := w; i < len(docs); i += workers {
				d := &docs[i]
				buf = appendEmbedText(buf[:0], d)
				hits[i] = hit{server: d.Server, name: d.Name, title: d.Title, description: d.Description, thash: hashText(buf),
					act: toolAction(d.Name, d.Description, d.Annotations)}
				analysed[i] = analyze(d, stems, nameWords[w])
			}
		})
	}
	wg.Wait()
	for _, m := range nameWords[1:] {
		maps.Copy(nameWords[0], m)
	}
	return analysed, nameWords[0]
}

func (ix *index) addName(norm string, doc int32) {
	if norm == "" {
		return
	}
	if ds := ix.names[norm]; len(ds) > 0 && ds[len(ds)-1] == doc {
		return
	}
	ix.names[norm] = append(ix.names[norm], doc)
	ix.namesOrder = append(ix.namesOrder, nameRef{norm, doc})
}

// withPrefix returns up to limit vocabulary terms that start with p and are
// longer than p.
func (ix *index) withPrefix(p string, limit int) []string {
	i := sort.SearchStrings(ix.vocab, p)
	var out []string
	for ; i < len(ix.vocab) && len(out) < limit && strings.HasPrefix(ix.vocab[i], p); i++ {
		if ix.vocab[i] != p {
			out = append(out, ix.vocab[i])
		}
	}
	return out
}

// namePrefixed calls fn for every document a folded name of which starts
// with p.
func (ix *index) namePrefixed(p string, fn func(doc int32)) {
	i := sort.Search(len(ix.namesOrder), func(i int) bool { return ix.namesOrder[i].norm >= p })
	for ; i < len(ix.namesOrder) && strings.HasPrefix(ix.namesOrder[i].norm, p); i++ {
		fn(ix.namesOrder[i].doc)
	}
}

// paramText returns the property names and descriptions of an input
// schema, two levels deep (properties of object properties and of array
// items), or "" for a schema that does not parse.
func paramText(schema []byte) string {
	if len(schema) == 0 {
		return ""
	}
	var s jsonSchema
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	var b strings.Builder
	s.writeParams(&b, 2)
	return b.String()
}

// paramTextOf is paramText of schema, the JSON of v: from v itself when it
// is a plain decoded object (as a client's tools/list gives), which saves
// decoding the JSON again (a third of the time to store a server), else
// from the JSON.
func paramTextOf(v any, schema []byte) string {
	if m, ok := v.(map[string]any); ok {
		var b strings.Builder
		if writeParamsOf(&b, m, 2) {
			return b.String()
		}
	}
	return paramText(schema)
}

// writeParamsOf is writeParams over a decoded object. It reports false,
// having written part, for any shape that writeParams's decoding treats
// specially (a description that is not a string, properties or items that
// are not objects): those take the JSON path.
func writeParamsOf(b *strings.Builder, s map[string]any, depth int) bool {
	if depth == 0 {
		return true
	}
	if d, ok := s["description"]; ok && d != nil {
		if _, ok := d.(string); !ok {
			return false
		}
	}
	var props map[string]any
	if p, ok := s["properties"]; ok && p != nil {
		if props, ok = p.(map[string]any); !ok {
			return false
		}
	}
	if it, ok := s["items"]; ok && it != nil {
		if _, ok := it.(map[string]any); !ok {
			return false
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(' ')
		if props[name] == nil {
			continue
		}
		p, ok := props[name].(map[string]any)
		if !ok {
			return false
		}
		desc, _ := p["description"].(string)
		b.WriteString(desc)
		b.WriteByte(' ')
		if !writeParamsOf(b, p, depth-1) {
			return false
		}
		if it, ok := p["items"].(map[string]any); ok {
			if !writeParamsOf(b, it, depth-1) {
				return false
			}
		}
	}
	return true
}

type jsonSchema struct {
	Description string                 `json:"description"`
	Properties  map[string]*jsonSchema `json:"properties"`
	Items       *jsonSchema            `json:"items"`
}

// UnmarshalJSON tolerates schemas of the wrong shape (items as an array,
// description as a number): whatever does not fit is left empty.
func (s *jsonSchema) UnmarshalJSON(b []byte) error {
	type plain jsonSchema
	var p plain
	if json.Unmarshal(b, &p) == nil {
		*s = jsonSchema(p)
		return nil
	}
	var loose map[string]json.RawMessage
	if json.Unmarshal(b, &loose) != nil {
		return nil
	}
	_ = json.Unmarshal(loose["description"], &s.Description)
	_ = json.Unmarshal(loose["properties"], &s.Properties)
	return nil
}

func (s *jsonSchema) writeParams(b *strings.Builder, depth int) {
	if s == nil || depth == 0 {
		return
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Properties[name]
		b.WriteString(name)
		b.WriteByte(' ')
		if p == nil {
			continue
		}
		b.WriteString(p.Description)
		b.WriteByte(' ')
		p.writeParams(b, depth-1)
		if p.Items != nil {
			p.Items.writeParams(b, depth-1)
		}
	}
}

// keywordsFor returns the extra words for tool from a server's
// searchKeywords, whose keys are tool names or globs over them.
func keywordsFor(kw map[string][]string, tool string) []string {
	var out []string
	for pattern, words := range kw {
		if pattern == tool {
			out = append(out, words...)
		} else if ok, _ := path.Match(pattern, tool); ok {
			out = append(out, words...)
		}
	}
	return out
}

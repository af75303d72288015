package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// explain says why a placed tool is where it is, for q, the understood
// query of its need: its match tier, the query's words each field of the
// tool holds, and the understanding steps that changed its score. It
// re-analyses the one tool, so a search pays for it only when asked.
func (ix *index) explain(q query, p placedResult, allow *scope) []string {
	h := &ix.docs[p.doc]
	var why []string
	switch p.match {
	case MatchExact:
		why = append(why, "name: the query is the tool's name")
	case MatchPrefix:
		why = append(why, "name: the tool's name starts with the query")
	case MatchSemantic:
		why = append(why, "meaning: its vector is near the query's (hybrid search), no word matched")
	}
	if p.implied != "" {
		why = append(why, "implied need: "+p.implied)
		q = query{text: p.implied}
	}
	qt := ix.queryTerms(q)
	// One line per word of the query that matched, as the person wrote
	// it (the index keeps stems: "note" is "not"), naming where.
	var order []string
	where := map[string][]string{}
	fields := []struct {
		name string
		ts   []string
	}{{"name", terms(h.name)}, {"server", terms(h.server)}, {"title", terms(h.title)}, {"description", terms(h.description)}, {"server's topic", ix.topics[h.server]}}
	for _, f := range fields {
		for _, t := range matchedTerms(qt, f.ts) {
			if _, seen := where[t]; !seen {
				order = append(order, t)
			}
			where[t] = append(where[t], f.name)
		}
	}
	written := spelled(q.text)
	glued := ix.compounds(q.text)
	for _, t := range order {
		if w := written[t]; w != "" {
			why = append(why, fmt.Sprintf("%q in %s", w, strings.Join(where[t], ", ")))
		} else if _, ok := glued[t]; ok {
			why = append(why, fmt.Sprintf("%q… (words of the query written as one) in %s", t, strings.Join(where[t], ", ")))
		} else {
			// A word of the query's synonyms, or of a need it implies.
			why = append(why, fmt.Sprintf("%q… (a related word) in %s", t, strings.Join(where[t], ", ")))
		}
	}
	if _, how := polarity(q.action, q.actions, q.long, h.act); how != "" {
		why = append(why, how)
	}
	if g := ix.dupOf[p.doc]; g >= 0 && allow != nil && len(allow.broken) > 0 {
		for _, d := range ix.dupGroups[g] {
			if d != p.doc && !allow.works(&ix.docs[d]) {
				why = append(why, fmt.Sprintf("copy that works: listed rather than the copy on %s, which cannot run now", ix.docs[d].server))
				break
			}
		}
	}
	return why
}

// spelled maps each term of text to the word it came from, as written.
func spelled(text string) map[string]string {
	out := map[string]string{}
	for _, w := range strings.Fields(text) {
		for _, t := range terms(w) {
			if out[t] == "" {
				out[t] = strings.Trim(w, ".,;:!?\"'()[]{}")
			}
		}
	}
	return out
}

func matchedTerms(qt map[string]float64, ts []string) []string {
	var out []string
	for _, t := range ts {
		if _, ok := qt[t]; ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

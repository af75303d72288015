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
	for _, f := range []struct {
		name string
		text string
	}{{"name", h.name}, {"server", h.server}, {"title", h.title}, {"description", h.description}} {
		if ws := matched(qt, f.text); len(ws) > 0 {
			why = append(why, f.name+": "+strings.Join(ws, ", "))
		}
	}
	if topic := ix.topics[h.server]; len(topic) > 0 {
		if ws := matchedTerms(qt, topic); len(ws) > 0 {
			why = append(why, "server's topic: "+strings.Join(ws, ", "))
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

// matched returns the query terms found in text's terms, sorted.
func matched(qt map[string]float64, text string) []string {
	return matchedTerms(qt, terms(text))
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

package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Compound words: see compounds.
const (
	compoundMinLen = 5 // letters of a compound of several words
	wordMinLen     = 4 // letters of one word read whole
)

// compounds returns, with their weights, the terms of the words of tool
// and server names that a query writes apart or splits. Names join words
// that people write apart, or split words that names write whole: "The
// Verge" is theverge, "Hacker News" hackernews, "who is" whois, "set up"
// setup, "InfoQ" (which the analysis splits at its case change, info + q)
// infoq. The terms are those of the words of tool and server names (as written, not stemmed: "for
// me" is not "forme", whose stem is form) that two or three neighbouring
// words of the query make when written together, and that one word makes
// when its case changes are not split; the query's own words are matched
// as they are besides. Names are where words are glued: descriptions are
// prose.
//
// A compound that glues a stop word to a word of meaning ("up date", "the
// verge") is weak, at weightStopCompound: the word has its own reading,
// and "look up date of birth" is not a request to update something. One
// of stop words alone ("who is") has no other reading, and counts fully.
func (ix *index) compounds(text string) map[string]float64 {
	out := map[string]float64{}
	add := func(w string, weak bool) {
		if !ix.nameWords[w] {
			return
		}
		x := 1.0
		if weak {
			x = weightStopCompound
		}
		t := stem(w)
		out[t] = max(out[t], x)
	}
	stop := stopwords()
	var prev [2]string // the two words before, lower case, letters only
	for _, tok := range strings.Fields(text) {
		core := trimPossessive(strings.TrimFunc(tok, isEdgePunct))
		w := foldWord(core)
		if w == "" {
			prev = [2]string{}
			continue
		}
		if innerCapital(core) && len(w) >= wordMinLen {
			add(w, false)
		}
		if prev[1] != "" && len(prev[1])+len(w) >= compoundMinLen {
			add(prev[1]+w, mixed(stop, prev[1], w))
			if prev[0] != "" {
				add(prev[0]+prev[1]+w, mixed(stop, prev[0], prev[1], w))
			}
		}
		prev = [2]string{prev[1], w}
		if r, _ := utf8.DecodeLastRuneInString(tok); isClauseEnd(r) {
			prev = [2]string{}
		}
	}
	return out
}

// weightStopCompound is the weight of a compound that glues a stop word
// to a word of meaning.
const weightStopCompound = 0.5

// mixed reports whether words has both stop words and others.
func mixed(stop map[string]bool, words ...string) bool {
	n := 0
	for _, w := range words {
		if stop[w] {
			n++
		}
	}
	return n > 0 && n < len(words)
}

// trimPossessive removes an English possessive ending: "The Verge's" is
// about The Verge.
func trimPossessive(w string) string {
	for _, s := range []string{"'s", "’s"} {
		w = strings.TrimSuffix(w, s)
	}
	return w
}

// foldWord returns a token's letters, lower case, or "" when it holds
// anything but ASCII letters and the punctuation around a word.
func foldWord(tok string) string {
	tok = strings.TrimFunc(tok, isEdgePunct)
	if tok == "" {
		return ""
	}
	var b strings.Builder
	for _, r := range tok {
		if r >= utf8.RuneSelf || !unicode.IsLetter(r) {
			return ""
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// innerCapital reports whether a word (without the punctuation around it)
// has a capital letter after its first letter, where the analysis splits
// it (InfoQ, GitHub).
func innerCapital(tok string) bool {
	for i := 1; i < len(tok); i++ {
		if tok[i] >= 'A' && tok[i] <= 'Z' {
			return true
		}
	}
	return false
}

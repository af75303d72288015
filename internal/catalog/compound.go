package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Compound words. Names join words that people write apart, or split
// words that names write whole: "The Verge" is theverge, "Hacker News"
// hackernews, "who is" whois, "set up" setup, "InfoQ" (which the analysis
// splits at its case change, info + q) infoq. compounds returns the terms
// of the words of tool and server names (as written, not stemmed: "for
// me" is not "forme", whose stem is form) that two or three neighbouring
// words of the query make when written together, and that one word makes
// when its case changes are not split; the query's own words are matched
// as they are besides. Names are where words are glued: descriptions are
// prose.
const (
	compoundMinLen = 5 // letters of a compound of several words
	wordMinLen     = 4 // letters of one word read whole
)

func (ix *index) compounds(text string) []string {
	var out []string
	add := func(w string) {
		if ix.nameWords[w] {
			out = append(out, stem(w))
		}
	}
	var prev [2]string // the two words before, lower case, letters only
	for _, tok := range strings.Fields(text) {
		w := foldWord(tok)
		if w == "" {
			prev = [2]string{}
			continue
		}
		if innerCapital(tok) && len(w) >= wordMinLen {
			add(w)
		}
		if prev[1] != "" && len(prev[1])+len(w) >= compoundMinLen {
			add(prev[1] + w)
			if prev[0] != "" {
				add(prev[0] + prev[1] + w)
			}
		}
		prev = [2]string{prev[1], w}
		if r, _ := utf8.DecodeLastRuneInString(tok); isSentenceEnd(r) || r == ',' || r == ';' || r == ':' {
			prev = [2]string{}
		}
	}
	return out
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

// innerCapital reports whether a word has a capital letter after its
// first letter, where the analysis splits it (InfoQ, GitHub).
func innerCapital(tok string) bool {
	for i := 1; i < len(tok); i++ {
		if tok[i] >= 'A' && tok[i] <= 'Z' && tok[i-1] != ' ' {
			return true
		}
	}
	return false
}

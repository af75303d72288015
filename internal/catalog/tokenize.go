package catalog

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text analysis for search. Words are split on anything that is not a
// letter or digit, on case changes (readFile, HTMLParser), and between
// letters and digits (ipv4, 12306); they are lower-cased and stemmed.
// Runs of CJK characters, which have no spaces, become each character and
// each pair of neighbouring characters.

// words splits s into lower-case words, unstemmed. CJK runs yield unigrams
// and bigrams.
func words(s string) []string {
	s = respell(s)
	var out []string
	var cjk []rune
	flushCJK := func() {
		for i, r := range cjk {
			out = append(out, string(r))
			if i+1 < len(cjk) {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	start := -1 // start of the current Latin/digit word
	var prev rune
	for i, r := range s {
		switch {
		case isCJK(r):
			if start >= 0 {
				out = appendWord(out, s[start:i])
				start = -1
			}
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(cjk) > 0 {
				flushCJK()
			}
			if start >= 0 && isBoundary(prev, r, s[i+utf8.RuneLen(r):]) {
				out = appendWord(out, s[start:i])
				start = i
			}
			if start < 0 {
				start = i
			}
		default:
			if len(cjk) > 0 {
				flushCJK()
			}
			if start >= 0 {
				out = appendWord(out, s[start:i])
				start = -1
			}
		}
		prev = r
	}
	if len(cjk) > 0 {
		flushCJK()
	}
	if start >= 0 {
		out = appendWord(out, s[start:])
	}
	return out
}

func appendWord(out []string, w string) []string {
	return append(out, strings.ToLower(w))
}

// isBoundary reports whether a word ends between prev and r; rest is the
// text after r, for the last capital of an acronym (HTML|Parser).
func isBoundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// isCJK reports whether r belongs to a script written without spaces.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo: Latin, Greek, Cyrillic and the rest
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// respellings turn names that are mostly punctuation into words.
var respellings = sync.OnceValue(func() *strings.Replacer {
	return strings.NewReplacer(
		"c++", " cpp ", "C++", " cpp ",
		"c#", " csharp ", "C#", " csharp ",
		"f#", " fsharp ", "F#", " fsharp ",
		".net", " dotnet ", ".NET", " dotnet ",
		"node.js", " nodejs ", "Node.js", " nodejs ",
	)
})

func respell(s string) string {
	if strings.ContainsAny(s, "+#.") {
		return respellings().Replace(s)
	}
	return s
}

// stopwords carry no meaning for search. Kept small: tool vocabulary such
// as "get", "list" or "all" is meaningful.
var stopwords = sync.OnceValue(func() map[string]bool {
	return setOf(`a an and are as at be been being but by for from had has have he her him his
how i if in into is it its me my of on or our she so than that the their them then there these
they this those to too us was we were what when where which while who whom why will with would you
your yours can could should shall may might must do does did done doing am please want wanna need
some any just also very really like over about up out one let lets i'm it's whether going get's`)
})

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// stem reduces an English word to a stem shared with its inflections:
// plurals, -ing, -ed, -ly, -ation, and a final silent e (create, creates,
// created, creating and creation all become "creat"). Words under four
// letters, digits and CJK are left alone.
func stem(w string) string {
	if len(w) < 4 || !isASCIILower(w) {
		return w
	}
	w = americanize(w)
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") &&
		!strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ation") && len(w) > 7:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ing") && len(w) > 5 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4 && !strings.HasSuffix(w, "eed") && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ly") && len(w) > 5:
		w = w[:len(w)-2]
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant left by a suffix (stopped → stop).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouslz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// terms returns the searchable terms of s: its words without stop words,
// stemmed.
func terms(s string) []string { return termsCached(s, nil, nil) }

// termsCached is terms with a cache of stems by word (nil: none); seen,
// when not nil, collects the words before stemming.
func termsCached(s string, stems map[string]string, seen map[string]bool) []string {
	ws := words(s)
	out := ws[:0]
	stop := stopwords()
	for _, w := range ws {
		if seen != nil {
			seen[w] = true
		}
		if stop[w] {
			continue
		}
		t, ok := stems[w]
		if !ok {
			t = stem(w)
			if stems != nil {
				stems[w] = t
			}
		}
		out = append(out, t)
	}
	return out
}

// normName folds a name or query to lower-case letters and digits only, to
// compare names across spellings: readFile, read_file and read-file all fold
// to "readfile".
func normName(s string) string {
	var b strings.Builder
	for _, r := range respell(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

package catalog

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Query understanding. A query is what an agent sends: often a whole task
// sentence, with paths, file names, web addresses, numbers and pasted
// material among the words that say what is needed. understand separates
// them: the words are matched against tool text; the things are kept out
// (a file called exchange.docx is a Word file, not an exchange rate), and
// what kind of thing each is becomes a weak hint; and a few general intents
// (save to a path, a relative date, a web address, a sum, a currency) add
// the helper capabilities they imply, each searched as a need of its own.

// query is an understood query.
type query struct {
	text    string             // the words to match: the query without its things, bounded
	hints   map[string]float64 // words for the kinds of things it names, with weights
	implied []impliedNeed      // helper capabilities the query implies
	long    bool               // many content words: request words weigh less (see requestWords)

	action  action // the action of its first action verb (see queryActions)
	actions uint8  // every action it names, a bit per action
}

// impliedNeed is a capability a query implies without naming it as a tool.
type impliedNeed struct {
	label string // what it is, shown with its results: "write a file"
	text  string // the words it is searched by
}

// Weights of the terms a query's things and intents add.
const (
	weightHint    = 0.5  // a kind of thing the query names (a .docx file: word document)
	weightRequest = 0.35 // a request word (find, get, check) in a long query
	longQuery     = 6    // content words from which a query counts as long
)

// maxQueryWords bounds the words of a query matched against tool text. A
// longer query is a request around material (a pasted article, a log, a
// list): requests say what they want at their start and end, so the
// first sentences up to headWords and the last sentence up to tailWords
// are kept, the middle dropped.
const (
	maxQueryWords = 80
	headWords     = 60
	tailWords     = 20
)

// understand analyses a raw query. It never fails; the zero query matches
// nothing.
func understand(raw string) query {
	q := query{hints: map[string]float64{}}
	var kept []string
	var things thingSet
	fileBefore := false // a file named earlier in this clause
	ended := false      // the token before ended a clause
	for _, tok := range strings.Fields(respell(raw)) {
		if ended {
			fileBefore = false
		}
		r, _ := utf8.DecodeLastRuneInString(tok)
		ended = isClauseEnd(r)
		core := trimPossessive(strings.TrimFunc(tok, isEdgePunct)) // python.org's
		kind := classify(core)
		if kind == thingNone {
			kept = append(kept, tok)
			continue
		}
		things.has[kind] = true
		if (kind == thingPath || kind == thingFile) && hasExtension(core) {
			// "… to notes.md" is where a result goes; "compare old.csv to
			// new.csv" names two files to read.
			if !fileBefore && len(kept) > 0 && destinationWords[strings.ToLower(strings.TrimFunc(kept[len(kept)-1], isEdgePunct))] {
				things.destination = true
			}
			fileBefore = true
		}
		for w, x := range kindHints(kind, core) {
			q.hints[w] = max(q.hints[w], x)
		}
		// Keep the sentence structure: a thing ending a sentence still ends it.
		if r, _ := utf8.DecodeLastRuneInString(tok); isSentenceEnd(r) {
			kept = append(kept, string(r))
		}
	}
	text := strings.Join(kept, " ")
	q.text = bound(text)
	q.long = countWords(q.text) >= longQuery
	q.implied, q.action, q.actions = intents(q.text, things)
	for _, t := range arithmeticTerms(q.text, things) {
		q.hints[t] = max(q.hints[t], weightHint)
	}
	return q
}

// isEdgePunct is punctuation around a token that belongs to the sentence,
// not the token: "(see /tmp/x.md)," is the path /tmp/x.md.
func isEdgePunct(r rune) bool {
	return strings.ContainsRune(`.,;:!?()[]{}<>"'“”‘’«»`, r) || unicode.Is(unicode.Pe, r) || unicode.Is(unicode.Ps, r)
}

func isSentenceEnd(r rune) bool { return strings.ContainsRune(".!?。！？", r) }

// isClauseEnd reports whether a word ending in r ends a clause: a
// sentence's end, or a comma, semicolon or colon.
func isClauseEnd(r rune) bool { return isSentenceEnd(r) || strings.ContainsRune(",;:", r) }

// thing kinds.
type thingKind int

const (
	thingNone   thingKind = iota
	thingURL              // https://…, www.…, example.com/page
	thingDomain           // example.com
	thingEmail            // someone@example.com
	thingPath             // /home/me/x, ~/notes, C:\Users, ./src
	thingFile             // report.docx, IMG_2231.jpg
	thingNumber           // 25, 0.35, 8:30, 2019-03-14, 54.187.216.72, v2.3.0, $5
	thingOpaque           // base64, hashes, keys, ids
)

// thingSet records what kinds of things a query names.
type thingSet struct {
	has [thingOpaque + 1]bool

	// destination: a file is named as where something goes ("… to
	// /home/me/notes.md", "into report.docx", "as out.pptx").
	destination bool
}

// destinationWords are the prepositions that make the file after them a
// destination: the ones English uses for where a result goes.
var destinationWords = map[string]bool{"to": true, "into": true, "as": true, "onto": true}

// hasExtension reports whether a path or file name ends in a known file
// type's extension (see fileTypes): a file, not a folder.
func hasExtension(t string) bool {
	base := t[strings.LastIndexAny(t, `/\`)+1:]
	i := strings.LastIndexByte(base, '.')
	return i >= 0 && fileTypes[strings.ToLower(base[i+1:])] != ""
}

var (
	reNumber = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[-+±~≈$€£¥₹#]?v?\d[\d.,:/_-]*(%|[kmbKMB]|st|nd|rd|th|am|pm|h|s|x)?$`)
	})
	reDomain = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?i)(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+([a-z]{2,12})(?::\d+)?(?:/\S*)?$`)
	})
	reEmail  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^@\s]+@(?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}$`) })
	reFile   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\w@%+~-][\w.@%+~-]*\.([A-Za-z][A-Za-z0-9]{0,4})$`) })
	reWinDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]:[\\/]`) })
)

// classify says what kind of thing a token (without the punctuation
// around it) is, or thingNone for a word.
func classify(t string) thingKind {
	if t == "" {
		return thingNone
	}
	lower := strings.ToLower(t)
	switch {
	case strings.Contains(t, "://") || strings.HasPrefix(lower, "www.") || strings.HasPrefix(lower, "data:"):
		return thingURL
	case reEmail().MatchString(t):
		return thingEmail
	case strings.HasPrefix(t, "/") && len(t) > 1, strings.HasPrefix(t, "~/"), strings.HasPrefix(t, "./"),
		strings.HasPrefix(t, "../"), reWinDir().MatchString(t), strings.Count(t, `\`) >= 2:
		return thingPath
	case reNumber().MatchString(t):
		return thingNumber
	case isOpaque(t):
		return thingOpaque
	}
	if m := reFile().FindStringSubmatch(t); m != nil && fileTypes[strings.ToLower(m[1])] != "" {
		if strings.Contains(t, "/") {
			return thingPath
		}
		return thingFile
	}
	if m := reDomain().FindStringSubmatch(t); m != nil && topLevelDomains()[strings.ToLower(m[1])] {
		if strings.Contains(t, "/") {
			return thingURL
		}
		return thingDomain
	}
	if strings.Count(t, "/") >= 2 && !strings.ContainsAny(t, " ") {
		if _, last, _ := strings.Cut(t[strings.LastIndexByte(t, '/'):], "."); fileTypes[strings.ToLower(last)] != "" {
			return thingPath // src/pkg/main.go
		}
	}
	return thingNone
}

// isOpaque reports whether t looks like an identifier or encoded data
// rather than words: long, and changing between letters and digits or
// case far more often than words do (base64, hex hashes, UUIDs, keys).
func isOpaque(t string) bool {
	if len(t) < 16 {
		return false
	}
	changes := 0
	var prev rune
	for i, r := range t {
		if i > 0 && (unicode.IsDigit(prev) != unicode.IsDigit(r) || (unicode.IsLower(prev) && unicode.IsUpper(r))) {
			changes++
		}
		if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("+/=_-", r))) {
			return false
		}
		prev = r
	}
	return changes*6 >= len(t)
}

// fileTypes maps a file extension to the words for what such a file is:
// the hint a file name gives, as "a .docx" means "a Word document".
var fileTypes = map[string]string{
	"md": "markdown", "markdown": "markdown", "txt": "text", "rtf": "text document",
	"pdf": "pdf", "doc": "word document", "docx": "word docx document", "odt": "document",
	"xls": "excel spreadsheet", "xlsx": "excel xlsx spreadsheet", "ods": "spreadsheet", "csv": "csv table",
	"ppt": "powerpoint presentation", "pptx": "powerpoint pptx presentation", "odp": "presentation",
	"json": "json", "yaml": "yaml", "yml": "yaml", "xml": "xml", "toml": "toml", "html": "html", "htm": "html",
	"jpg": "image", "jpeg": "image", "png": "image", "gif": "image", "webp": "image", "svg": "svg image",
	"bmp": "image", "heic": "image", "tif": "image", "tiff": "image",
	"mp3": "audio", "wav": "audio", "flac": "audio", "ogg": "audio", "m4a": "audio",
	"mp4": "video", "mov": "video", "mkv": "video", "avi": "video", "webm": "video",
	"zip": "archive", "tar": "archive", "gz": "archive", "tgz": "archive", "7z": "archive", "rar": "archive",
	"py": "python code", "js": "javascript code", "ts": "typescript code", "go": "go code", "rs": "rust code",
	"java": "java code", "c": "code", "cpp": "cpp code", "h": "code", "rb": "ruby code", "sh": "shell script",
	"sql": "sql", "ipynb": "jupyter notebook", "epub": "ebook", "log": "log", "db": "database", "sqlite": "database",
}

// topLevelDomains are the common generic and country domains: a word.word
// ending in one of them is a web address (fjallraven.com), not two words.
var topLevelDomains = sync.OnceValue(func() map[string]bool {
	return setOf(`com net org io dev ai app co edu gov mil int info biz me tv us uk de fr jp cn ru in
br au ca eu nl se no dk fi es it ch at be pl cz kr tw hk sg nz za mx ar ie pt gr tr il ua xyz site online tech
cloud page blog shop store news wiki`)
})

// kindHints returns the weak hint words for a thing: what kind of thing it
// is, so that tools for that kind rank a little higher.
func kindHints(k thingKind, t string) map[string]float64 {
	h := map[string]float64{}
	add := func(words string, w float64) {
		for _, x := range terms(words) {
			h[x] = max(h[x], w)
		}
	}
	switch k {
	case thingURL:
		add("web url", weightHint/2)
	case thingDomain:
		add("web url domain", weightHint/2)
	case thingEmail:
		add("email", weightHint)
	case thingPath, thingFile:
		add("file", weightHint/2)
	case thingNumber:
		if strings.Count(t, ".") == 3 && !strings.ContainsAny(t, ",:/_-") {
			add("ip address", weightHint) // 54.187.216.72: a network address
		}
	}
	if k == thingPath || k == thingFile || k == thingURL {
		base := t[strings.LastIndexAny(t, `/\`)+1:]
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			add(fileTypes[strings.ToLower(strings.TrimRight(base[i+1:], "?#"))], weightHint)
		}
	}
	return h
}

// bound keeps the head and the tail of a query longer than maxQueryWords
// (see there), cutting at sentence ends.
func bound(s string) string {
	if countWords(s) <= maxQueryWords {
		return s
	}
	sentences := splitSentences(s)
	var head []string
	n := 0
	for i, sent := range sentences {
		c := countWords(sent)
		if n+c > headWords {
			if i == 0 {
				head = append(head, firstWords(sent, headWords))
			}
			break
		}
		head = append(head, sent)
		n += c
	}
	last := sentences[len(sentences)-1]
	if len(sentences) > len(head) {
		head = append(head, firstWords(last, tailWords))
	}
	return strings.Join(head, " ")
}

// splitSentences splits s after each sentence end and at line breaks.
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if isSentenceEnd(r) || r == '\n' {
			end := i + utf8.RuneLen(r)
			if t := strings.TrimSpace(s[start:end]); t != "" {
				out = append(out, t)
			}
			start = end
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// countWords counts the words of s: Latin words, and CJK characters at
// half a word each (a Chinese word is one to three characters).
func countWords(s string) int {
	n, cjk := 0, 0
	inWord := false
	for _, r := range s {
		switch {
		case isCJK(r):
			cjk++
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				n++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	return n + cjk/2
}

// firstWords returns the start of s up to n words (as countWords counts).
func firstWords(s string, n int) string {
	prev := 0
	for i := range s {
		if i > prev && countWords(s[:i]) > n {
			return strings.TrimSpace(s[:prev])
		}
		prev = i
	}
	return s
}

// requestWords say how to help, not with what: the verbs of a request and
// words of time. In a short query they may be the need itself ("find
// files", "latest version"); in a long one the other words name it, and
// these would otherwise rank every finder and every latest-version tool
// (see weightRequest).
var requestWords = sync.OnceValue(func() map[string]bool {
	return stemSet(`find get show give tell check make help use look see know want need try take
go put let work thing things way latest current new recent now best good also first next really`)
})

func stemSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[stem(w)] = true
	}
	return m
}

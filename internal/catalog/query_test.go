package catalog

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want thingKind
	}{
		{"https://example.com/a?b=c", thingURL},
		{"www.example.org", thingURL},
		{"example.com/contact", thingURL},
		{"data:image/png;base64,iVBORw0KGgo", thingURL},
		{"fjallraven.com", thingDomain},
		{"python.org", thingDomain},
		{"someone@example.co.uk", thingEmail},
		{"/root/notes/x.md", thingPath},
		{"~/digests/today.md", thingPath},
		{"./src", thingPath},
		{`C:\Users\me\report.docx`, thingPath},
		{"src/pkg/main.go", thingPath},
		{"exchange.docx", thingFile},
		{"IMG_2231.jpg", thingFile},
		{"CHANGELOG.md", thingFile},
		{"25", thingNumber},
		{"0.35", thingNumber},
		{"8:30", thingNumber},
		{"2019-03-14", thingNumber},
		{"54.187.216.72", thingNumber},
		{"v2.3.0", thingNumber},
		{"$300", thingNumber},
		{"15%", thingNumber},
		{"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", thingOpaque},
		{"3f2a9c1e8b7d4f6a0c5e9b2d7a1f4c8e6b3d0a9f", thingOpaque},
		{"550e8400-e29b-41d4-a716-446655440000", thingOpaque},
		// Words, names and identifiers stay words.
		{"weather", thingNone},
		{"readFile", thingNone},
		{"getCurrentWeatherForecastForCity", thingNone},
		{"get_stations_code_in_city_12306", thingNone},
		{"resolve-library-id", thingNone},
		{"github.search", thingNone},
		{"shadcn/ui", thingNone},
		{"and/or", thingNone},
		{"ipv4", thingNone},
		{"mp3", thingNone},
		{"e.g", thingNone},
		{"org.springframework.boot:spring-boot-starter-web", thingNone},
	} {
		if got := classify(tt.in); got != tt.want {
			t.Errorf("classify(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestUnderstand(t *testing.T) {
	labels := func(q query) []string {
		var out []string
		for _, in := range q.implied {
			out = append(out, in.label)
		}
		return out
	}
	for _, tt := range []struct {
		in        string
		text      string   // "" to skip
		hints     []string // hint terms that must be there
		implied   []string
		notImpled []string
	}{
		{in: "read file", text: "read file"},
		// A file's name is not its content: exchange.docx is a Word file.
		{in: "summarise exchange.docx", text: "summarise", hints: []string{"word", "docx", "document"}},
		{in: "save the summary to /root/notes/x.md", text: "save the summary to", hints: []string{"markdown"},
			implied: []string{"write a file"}},
		{in: "write the list into a file", implied: []string{"write a file"}},
		{in: "read /etc/hosts", notImpled: []string{"write a file"}},
		{in: "show the log of /var/log/app.log", notImpled: []string{"write a file"}},
		{in: "log the total to /home/me/crypto/portfolio.md", implied: []string{"write a file"}}, // a destination
		{in: "export the chart as chart.png", implied: []string{"write a file"}},
		{in: "in /docs/contract.docx, change every mention of Acme", notImpled: []string{"write a file"}},
		{in: "go to /settings and turn on dark mode", notImpled: []string{"write a file"}}, // no file
		{in: "compare old.csv to new.csv", notImpled: []string{"write a file"}},            // two files to read
		{in: "diff v1.json to v2.json, then save the changes to notes.md", implied: []string{"write a file"}},
		{in: "what is on tomorrow", implied: []string{"today's date"}},
		{in: "flights next Friday", implied: []string{"today's date"}},
		{in: "下周五的天气", implied: []string{"today's date"}},
		{in: "meeting at 9 what time is that in Tokyo", implied: []string{"time zone"}},
		{in: "check the price on the shop's site", implied: []string{"open a web page"}},
		{in: "what does https://example.com/pricing say", text: "what does say", implied: []string{"open a web page"}},
		{in: "add up the totals", implied: []string{"calculate"}},
		{in: "what is 20 percent of the bill", implied: []string{"calculate"}},
		{in: "how much is that in euros", implied: []string{"convert currency"}},
		{in: "convert 10 miles to km", implied: []string{"convert units"}},
		{in: "find the latest news about the launch", implied: []string{"search the web"}},
		// Ordinary needs imply nothing.
		{in: "create a github issue", notImpled: []string{"write a file", "today's date", "open a web page", "calculate",
			"convert currency", "convert units", "search the web", "time zone"}},
		{in: "list the files in the folder", notImpled: []string{"write a file"}},
		// Numbers and opaque tokens are left out.
		{in: "buy 25 shares for $300", text: "buy shares for"},
		{in: "decode iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk please", text: "decode please"},
		{in: "who owns 54.187.216.72", text: "who owns", hints: []string{"ip", "address"}},
		{in: "mail bob@example.com", text: "mail", hints: []string{"email"}},
		{in: "who registered stripe.com", text: "who registered", hints: []string{"domain", "web"}}, // a bare domain names a domain
		// Respelled names survive.
		{in: "node.js docs", text: "nodejs docs"},
	} {
		q := understand(tt.in)
		if tt.text != "" && q.text != tt.text {
			t.Errorf("understand(%q).text = %q, want %q", tt.in, q.text, tt.text)
		}
		for _, h := range tt.hints {
			if q.hints[stem(h)] == 0 {
				t.Errorf("understand(%q).hints = %v, want %q among them", tt.in, q.hints, h)
			}
		}
		got := labels(q)
		for _, l := range tt.implied {
			if !slices.Contains(got, l) {
				t.Errorf("understand(%q) implies %q, want %q among them", tt.in, got, l)
			}
		}
		for _, l := range tt.notImpled {
			if slices.Contains(got, l) {
				t.Errorf("understand(%q) implies %q, want no %q", tt.in, got, l)
			}
		}
	}
}

func TestUnderstandBoundsLongQueries(t *testing.T) {
	article := strings.Repeat("The committee met again on the matter of the bridge and discussed its costs at length. ", 40)
	q := understand("Summarise this article for me. " + article + "Then translate the summary into French.")
	if n := countWords(q.text); n > maxQueryWords {
		t.Errorf("bounded query has %d words, want at most %d", n, maxQueryWords)
	}
	for _, w := range []string{"Summarise this article", "translate the summary into French"} {
		if !strings.Contains(q.text, w) {
			t.Errorf("bounded query %q lacks %q: the request's start and end are kept", q.text, w)
		}
	}
	short := "What will the weather be in Lisbon next Friday, and how much is 300 dollars in euros there?"
	if q := understand(short); q.text != "What will the weather be in Lisbon next Friday, and how much is dollars in euros there?" {
		t.Errorf("a short query is changed beyond its numbers: %q", q.text)
	}
	// One long sentence is cut to the head's words.
	one := strings.Repeat("word ", 500)
	if n := countWords(understand(one).text); n != headWords {
		t.Errorf("one long sentence bounded to %d words, want %d", n, headWords)
	}
}

func TestRequestWordsWeighLessInLongQueries(t *testing.T) {
	ix := buildIndex(1, []toolDoc{{Server: "s", Name: "find_place", Description: "Find a place."}, {Server: "s", Name: "web_search", Description: "Search the web."}})
	short := ix.queryTerms(understand("find place"))
	long := ix.queryTerms(understand("find recent papers on protein folding and summarise them"))
	if short["find"] != 1 {
		t.Errorf("short query: find weighs %v, want 1", short["find"])
	}
	if long["find"] != weightRequest || long["paper"] != 1 {
		t.Errorf("long query: find weighs %v and paper %v, want %v and 1", long["find"], long["paper"], weightRequest)
	}
}

func FuzzUnderstand(f *testing.F) {
	for _, s := range []string{"", "save it to /root/x.md", "https://a.b/c?d", "今天天气", "a@b.co 54.1.2.3 $5",
		strings.Repeat("long words here. ", 100), "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", "x.docx next friday in euros"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := understand(s)
		if n := countWords(q.text); n > maxQueryWords+tailWords {
			t.Errorf("understand(%q): %d words, want at most %d", s, n, maxQueryWords+tailWords)
		}
		if utf8.ValidString(s) && !utf8.ValidString(q.text) {
			t.Errorf("understand(%q).text = %q is not valid UTF-8", s, q.text)
		}
		for w, x := range q.hints {
			if x <= 0 || x > weightHint {
				t.Errorf("understand(%q): hint %q weighs %v, want (0, %v]", s, w, x, weightHint)
			}
		}
		seen := map[string]bool{}
		for _, in := range q.implied {
			if seen[in.label] || in.text == "" {
				t.Errorf("understand(%q): implied %v twice or empty", s, in)
			}
			seen[in.label] = true
		}
		if again := understand(s); !cmp.Equal(q, again, cmp.AllowUnexported(query{}, impliedNeed{})) {
			t.Errorf("understand(%q) differs between calls", s)
		}
	})
}

package catalog

import (
	"strings"
	"sync"
)

// Implied needs. A task sentence often needs a helper it never names as a
// tool: "save it to /root/notes/x.md" needs something that writes files,
// "next Friday" needs today's date, "check the price on the shop's site"
// needs a browser. Each intent below is a general pattern of ordinary
// language, with the capability it implies; the capability is searched as a
// need of its own (by its text), so its tools get their own places in the
// results instead of competing with the words of the main need.
//
// Word groups are matched on the query's words, lower case and stemmed
// (stem), as whole words or word sequences; CJK phrases as substrings.

// intent is one general pattern.
type intent struct {
	need  impliedNeed
	fires func(m *matcher) bool
}

var intentTable = []intent{
	{
		// Saving, writing or exporting together with a path or file name
		// (or the word file): the result has to be written somewhere. Verbs
		// that are as often nouns of tools (log, record, dump) are left out:
		// "show the log of /var/log/app" writes nothing. A file named as a
		// destination ("log the total to /home/me/x.md", "into out.csv",
		// "as deck.pptx") is written to, whatever the verb; "in" is left
		// out: "in /docs/contract.docx, change…" names the file to edit.
		need: impliedNeed{label: "write a file", text: "write file save content to a file"},
		fires: func(m *matcher) bool {
			return m.things.destination ||
				m.any(saveWords) && (m.things.has[thingPath] || m.things.has[thingFile] || m.any(fileWords))
		},
	},
	{
		// Dates relative to now (today, tomorrow, next Friday, this month,
		// three days ago) can only be resolved knowing the current date.
		need:  impliedNeed{label: "today's date", text: "current date today time"},
		fires: func(m *matcher) bool { return m.any(relativeDates) || m.cjk(relativeDatesCJK) },
	},
	{
		// A time asked for in some place or zone is a time-zone question.
		need:  impliedNeed{label: "time zone", text: "convert time zone timezone"},
		fires: func(m *matcher) bool { return m.any(timeZoneWords) || m.cjk(timeZoneCJK) },
	},
	{
		// A web address, or the words for a web site, is somewhere to go:
		// a browser or a fetcher is needed to read it.
		need: impliedNeed{label: "open a web page", text: "open web page url navigate browser fetch website"},
		fires: func(m *matcher) bool {
			return m.things.has[thingURL] || m.things.has[thingDomain] || m.any(siteWords) || m.cjk(siteCJK)
		},
	},
	{
		// Sums, totals, averages and percentages are arithmetic.
		need:  impliedNeed{label: "calculate", text: "calculate math expression arithmetic"},
		fires: func(m *matcher) bool { return m.any(computeWords) || m.cjk(computeCJK) },
	},
	{
		// A currency named in a question (worth in euros, cost in kroner)
		// means converting money at an exchange rate.
		need:  impliedNeed{label: "convert currency", text: "currency exchange rate convert"},
		fires: func(m *matcher) bool { return m.any(currencyWords) || m.cjk(currencyCJK) },
	},
	{
		// Converting between units of measure.
		need: impliedNeed{label: "convert units", text: "convert unit measurement"},
		fires: func(m *matcher) bool {
			return m.count(unitWords) >= 2 || (m.count(unitWords) >= 1 && m.any(convertWords))
		},
	},
	{
		// Asking to find information or news, or to search the web: a
		// general web search serves it whatever the topic.
		need:  impliedNeed{label: "search the web", text: "web search internet news information"},
		fires: func(m *matcher) bool { return m.any(findInfoWords) || m.cjk(findInfoCJK) },
	},
}

// Word groups of the intents: ordinary language, each justified above.
var (
	saveWords    = phrases(`save, write, store, export, jot, append, put it, keep it, download`)
	fileWords    = phrases(`file, disk, folder, directory`)
	convertWords = phrases(`convert, conversion, into, how many, how much, in terms of`)

	relativeDates = phrases(`today, tonight, tomorrow, yesterday, this week, next week, last week, this weekend,
		next weekend, this month, next month, last month, this year, next year, last year, end of the month,
		end of this month, end of the week, days ago, weeks ago, months ago, years ago, from today, from now,
		days from, in two days, in three days, in a week, next monday, next tuesday, next wednesday, next thursday,
		next friday, next saturday, next sunday, this monday, this tuesday, this wednesday, this thursday,
		this friday, this saturday, this sunday, on monday, on tuesday, on wednesday, on thursday, on friday,
		on saturday, on sunday, how many days, days left, days until, weekday, day of the week`)
	relativeDatesCJK = []string{"今天", "明天", "昨天", "后天", "前天", "下周", "上周", "本周", "这周", "周末",
		"本月", "下个月", "上个月", "月底", "今年", "明年", "去年", "今日", "明日", "昨日", "来週", "先週", "今週",
		"오늘", "내일", "어제", "이번 주", "다음 주", "지난주", "이번 달"}

	timeZoneWords = phrases(`time zone, timezone, time zones, local time, my time, what time, time difference,
		time in, time there`)
	timeZoneCJK = []string{"时区", "几点", "時差", "시차", "몇 시"}

	siteWords = phrases(`website, web site, webpage, web page, homepage, home page, site, online store,
		online shop`)
	siteCJK = []string{"网站", "网页", "官网", "链接", "웹사이트", "사이트"}

	computeWords = phrases(`calculate, calculation, compute, computation, add up, adds up, sum, total, average,
		percent, percentage, multiply, divide, subtract, arithmetic, how much is, growth rate`)
	computeCJK = []string{"计算", "总共", "一共", "合计", "平均", "百分比", "계산", "합계", "평균"}

	currencyWords = phrases(`currency, currencies, exchange rate, forex, euro, euros, eur, dollar, dollars, usd,
		us dollars, gbp, sterling, jpy, yen, cny, rmb, yuan, renminbi, kroner, krone, krona, kronor, nok, sek, dkk,
		franc, francs, chf, rupee, rupees, inr, peso, pesos, ruble, rubles, rouble, roubles`)
	currencyCJK = []string{"汇率", "人民币", "美元", "欧元", "日元", "英镑", "港币", "换算", "환율", "달러", "유로", "엔화"}

	unitWords = phrases(`km, kilometre, kilometres, kilometer, kilometers, mile, miles, mph, kg, kilogram,
		kilograms, lb, lbs, pound, pounds, ounce, ounces, oz, gram, grams, celsius, fahrenheit, kelvin, feet,
		foot, inch, inches, metre, metres, meter, meters, cm, mm, litre, litres, liter, liters, gallon, gallons,
		ml, acre, acres, hectare, hectares, yard, yards, tablespoon, teaspoon`)

	findInfoWords = phrases(`news, headline, headlines, search the web, web search, search online, search the
		internet, look up, look it up, find out, find information, information about, information on,
		info about, latest on, what's new, what is new, what is known, published, reviews of, research on`)
	findInfoCJK = []string{"新闻", "资讯", "搜一下", "网上", "뉴스", "검색", "검색해"}
)

// phrase is a word sequence, stemmed.
type phrase []string

// phrases is a comma-separated list of word sequences, parsed (and
// stemmed) on first use: a command that never searches does not pay for it
// at start-up.
func phrases(s string) func() []phrase {
	return sync.OnceValue(func() []phrase { return parsePhrases(s) })
}

func parsePhrases(s string) []phrase {
	var out []phrase
	for _, p := range strings.Split(s, ",") {
		var ph phrase
		for _, w := range strings.Fields(p) {
			ph = append(ph, stem(strings.ToLower(w)))
		}
		if len(ph) > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// matcher matches phrases against one query's words.
type matcher struct {
	words  []string // stemmed, stop words kept
	text   string   // the query, lower case, for CJK substrings
	things thingSet
}

func newMatcher(text string, things thingSet) *matcher {
	ws := words(text)
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return &matcher{words: ws, text: strings.ToLower(text), things: things}
}

// count returns how many of the phrases of list occur in the query.
func (m *matcher) count(list func() []phrase) int {
	ps := list()
	n := 0
	for _, p := range ps {
		if m.has(p) {
			n++
		}
	}
	return n
}

func (m *matcher) any(list func() []phrase) bool {
	for _, p := range list() {
		if m.has(p) {
			return true
		}
	}
	return false
}

func (m *matcher) has(p phrase) bool {
	for i := 0; i+len(p) <= len(m.words); i++ {
		ok := true
		for j, w := range p {
			if m.words[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (m *matcher) cjk(list []string) bool {
	for _, s := range list {
		if strings.Contains(m.text, s) {
			return true
		}
	}
	return false
}

// intents returns the needs that text (a query without its things) and the
// things it named imply, in intentTable's order, and the actions it asks
// for (see queryActions).
func intents(text string, things thingSet) (out []impliedNeed, primary action, all uint8) {
	m := newMatcher(text, things)
	for _, in := range intentTable {
		if in.fires(m) {
			out = append(out, in.need)
		}
	}
	primary, all = queryActions(m)
	return out, primary, all
}

// arithmeticTerms returns the hint terms of an arithmetic query (see
// arithmetic), or nil.
func arithmeticTerms(text string, things thingSet) []string {
	if !arithmetic(newMatcher(text, things)) {
		return nil
	}
	return terms(arithmeticHints)
}

package catalog

import (
	"strings"
)

// Actions and their polarity. Words say what a query is about; its verbs
// say what should happen to it. "Remember that Alice works at Acme" and
// "forget Alice" share their object and ask for opposite things, and a tool
// that deletes what the user wants kept is the worst answer there is, not a
// near miss. So the search reads the action a query asks for from its
// verbs, and each tool's action from its name, its description's first
// word and its annotations (readOnlyHint, destructiveHint), and ranks tools
// whose action matches above those whose action contradicts it.
//
// The word lists are general English verbs of the five actions, as people
// and tools phrase them; they were written from the language, not from any
// evaluation set's queries.

// action is what a query asks to happen, or what a tool does.
type action int8

const (
	actNone   action = iota
	actCreate        // make something exist that did not: create, add, save, remember
	actDelete        // make something stop existing: delete, remove, forget
	actRead          // look at what exists: read, get, show, list
	actUpdate        // change what exists: update, edit, rename, move
	actSearch        // find among what exists: search, find, look up
)

var actionNames = [...]string{actNone: "", actCreate: "create", actDelete: "delete", actRead: "read", actUpdate: "update", actSearch: "search"}

func (a action) String() string { return actionNames[a] }

// Verbs of each action, matched as whole (stemmed) words or word
// sequences; a sequence wins over its own words ("get rid of" is delete,
// not get). Verbs that are as often nouns of the object ("list", "note",
// "record", "log") are in the tool lists, where names are imperative, and
// only at the start of a query in the query lists (see queryAction).
var (
	createVerbs = phrases(`create, add, insert, save, store, remember, memorize, memorise, record, write, register,
		keep in mind, keep track of, make a note, take a note, jot down, make, new, put, append, generate, build,
		upload, post, submit, log, set up`)
	deleteVerbs = phrases(`delete, remove, forget, erase, drop, discard, destroy, purge, wipe, clear, unlink, unset,
		get rid of, throw away, take out, rm, del, revoke, uninstall, cancel`)
	readVerbs = phrases(`read, get, show, display, view, list, open, print, fetch, retrieve, load, see, tell me,
		look at, describe, inspect, recall, cat, ls, dump, check, return`)
	updateVerbs = phrases(`update, edit, change, modify, fix, correct, rename, move, replace, set, patch, alter,
		amend, adjust, revise, toggle, overwrite, mv, enable, disable, turn on, turn off, switch`)
	searchVerbs = phrases(`search, find, look up, look for, lookup, query, locate, seek, grep, filter, match`)

	// A query that starts as a question asks to know, whatever verbs it
	// holds ("how has the price moved", "what do you remember about
	// Alice"): its action is read. Requests phrased as questions ("how do
	// I save…", "can you delete…") are not: their verbs are the request.
	questionStarts = phrases(`what, which, who, whom, whose, where, when, why, how, is, are, was, were, does, do,
		did, has, have, had`)
	requestStarts = phrases(`how do i, how do we, how can i, how can we, how should i, how would i, how to,
		can you, could you, would you, will you, can i, could i, should i, do i, please`)

	// Arithmetic: "add two numbers", "add 3 and 4" add values up; they
	// create nothing. A query whose objects are numbers reads add, plus
	// and sum as arithmetic, which has no action to match or contradict.
	arithmeticVerbs = phrases(`add, plus, sum, total, subtract, minus, multiply, divide, times`)
	numberWords     = phrases(`number, numbers, figure, figures, digit, digits, value, values, one, two, three, four,
		five, six, seven, eight, nine, ten, hundred, thousand, million, integer, integers, decimal`)
)

// arithmetic reports whether a query asks to add, subtract, multiply or
// divide numbers.
func arithmetic(m *matcher) bool {
	return m.any(arithmeticVerbs) && (m.any(numberWords) || m.things.has[thingNumber])
}

// arithmeticHints are the words tools that do arithmetic use, added to an
// arithmetic query: "add two numbers" asks for a sum.
const arithmeticHints = "sum calculate arithmetic"

// actionVerb is one verb list and its action.
type actionVerb struct {
	act   action
	verbs func() []phrase
}

var actionVerbs = []actionVerb{
	{actDelete, deleteVerbs}, {actCreate, createVerbs}, {actUpdate, updateVerbs},
	{actSearch, searchVerbs}, {actRead, readVerbs},
}

// queryActions reads the actions a query asks for: the action of its
// first action verb (primary), and every action it names (all, a bit set
// by action). A query that names none, or that is arithmetic on numbers,
// has actNone.
func queryActions(m *matcher) (primary action, all uint8) {
	if arithmetic(m) {
		return actNone, 0
	}
	if hasAt(m.words, 0, questionStarts) && !hasAt(m.words, 0, requestStarts) {
		return actRead, 1 << actRead
	}
	first := len(m.words)
	for i := 0; i < len(m.words); {
		act, n := verbAt(m.words, i)
		if n == 0 {
			i++
			continue
		}
		if i < first {
			first, primary = i, act
		}
		all |= 1 << act
		i += n
	}
	return primary, all
}

// verbAt returns the action of the longest verb phrase at words[i:], and
// its length in words; 0 when none starts there.
func verbAt(words []string, i int) (action, int) {
	best, bestN := actNone, 0
	for _, av := range actionVerbs {
		for _, p := range av.verbs() {
			if len(p) > bestN && hasPhraseAt(words, i, p) {
				best, bestN = av.act, len(p)
			}
		}
	}
	return best, bestN
}

func hasAt(words []string, i int, list func() []phrase) bool {
	for _, p := range list() {
		if hasPhraseAt(words, i, p) {
			return true
		}
	}
	return false
}

func hasPhraseAt(words []string, i int, p phrase) bool {
	if i+len(p) > len(words) {
		return false
	}
	for j, w := range p {
		if words[i+j] != w {
			return false
		}
	}
	return true
}

// toolAct is a tool's action and what its annotations promise.
type toolAct struct {
	act         action
	readOnly    bool // readOnlyHint: changes nothing
	destructive bool // destructiveHint: may delete or overwrite
}

// toolAction reads a tool's action: the first action verb among its
// name's words, else its description's first word (descriptions start
// with what the tool does: "Deletes…", "Returns…"), else read for a tool
// annotated read-only. annotations is the stored JSON of its annotations.
func toolAction(name, description, annotations string) toolAct {
	var t toolAct
	t.readOnly = strings.Contains(annotations, `"readOnlyHint":true`)
	t.destructive = strings.Contains(annotations, `"destructiveHint":true`) && !t.readOnly
	ws := stemmedWords(name)
	for i := range ws {
		if act, n := verbAt(ws, i); n > 0 {
			t.act = act
			break
		}
	}
	if t.act == actNone {
		if first := firstWord(description); first != "" {
			t.act, _ = verbAt([]string{stem(first)}, 0)
		}
	}
	if t.act == actNone && t.readOnly {
		t.act = actRead
	}
	return t
}

func stemmedWords(s string) []string {
	ws := words(s)
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// firstWord returns the first word of s, lower case.
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	ws := words(f[0])
	if len(ws) == 0 {
		return ""
	}
	return ws[0]
}

// Polarity factors: a tool whose action is the query's first one gains, one
// whose action is another the query names gains less, and one whose action
// undoes the query's loses. A read-only tool cannot make the change a query
// asks for, and a destructive one is the wrong answer to a question, but
// both are steps of many tasks: they lose less.
const (
	factorPrimary    = 1.3
	factorNamed      = 1.1
	factorOpposite   = 0.45
	factorWrongPower = 0.8
)

// polarity returns the factor of a tool's score for a query's actions, and
// a word for why ("" when 1).
//
// In a long query (a task of several steps) the first verb is one step
// among others: every action it names counts alike.
func polarity(primary action, all uint8, long bool, t toolAct) (float64, string) {
	switch f, why := polarityOf(primary, all, long, t); why {
	case whyPrimary:
		return f, "action matches (" + primary.String() + ")"
	case whyNamed:
		return f, "action named (" + t.act.String() + ")"
	case whyOpposite:
		return f, "action contradicts (" + primary.String() + " vs " + t.act.String() + ")"
	case whyPower:
		return f, "cannot serve the action (" + primary.String() + ")"
	default:
		return f, ""
	}
}

// Why polarityOf chose its factor.
const (
	whyNone = iota
	whyPrimary
	whyNamed
	whyOpposite
	whyPower
)

// polarityOf is polarity without the words, for ranking every candidate.
func polarityOf(primary action, all uint8, long bool, t toolAct) (float64, int) {
	if primary == actNone {
		return 1, whyNone
	}
	if t.act != actNone && t.act == primary && !long {
		return factorPrimary, whyPrimary
	}
	if t.act != actNone && all&(1<<t.act) != 0 {
		return factorNamed, whyNamed
	}
	if opposes(primary, t) {
		return factorOpposite, whyOpposite
	}
	changes := primary == actCreate || primary == actDelete || primary == actUpdate
	if changes && t.readOnly || !changes && t.destructive {
		return factorWrongPower, whyPower
	}
	return 1, whyNone
}

// opposes reports whether a tool's action undoes the query's: creating
// and deleting undo each other, and a question is not answered by deleting.
func opposes(q action, t toolAct) bool {
	switch q {
	case actCreate, actUpdate:
		return t.act == actDelete
	case actDelete:
		return t.act == actCreate
	case actRead, actSearch:
		return t.act == actDelete
	}
	return false
}

package catalog

import (
	"slices"
	"strings"
)

// British and American spelling. Tool descriptions are mostly written in
// American spelling; people write either ("organise", "licence",
// "neighbourhood", "analyse", "colour", "centre", "catalogue",
// "cancelled"). americanize folds the regular differences of English
// orthography to one form before stemming, on both sides: the index's words
// and the query's. Because both sides are folded alike, a rule that also
// changes a word with no other spelling ("promise" to "promize") costs
// nothing; only two different words that fold together could, and the
// rules are narrow enough that such pairs are rare (refilled and refiled;
// excelled and Excel).
//
// The rules, each a pattern of the spelling, not a list of words:
//   - -ise, -isation, -yse → -ize, -ization, -yze (organise, analyse), with
//     their inflections;
//   - -our → -or after three letters or more (colour, neighbourhood,
//     favourite; not hour, four, tour);
//   - -tre → -ter at the end (centre, metre, litre);
//   - -cence, -fence → -cense, -fense (licence, defence);
//   - -ogue → -og after three letters or more (catalogue, dialogue);
//   - -mme → -m at the end (programme);
//   - a doubled l after four letters or more is single, at the end or
//     before -s, -ed, -ing, -er (cancelled, travelling, labelled,
//     modelling, controlled; install and installed both fold to instal);
//     shorter words (call, fill, spell) keep theirs.
func americanize(w string) string {
	if len(w) < 5 {
		return w
	}
	switch w[len(w)-1] { // the last letters of every rule's endings
	case 'e', 's', 'd', 'g', 'r', 'n', 'l':
	default:
		return w
	}
	for _, r := range spellingRules {
		i := strings.LastIndex(w, r.from)
		if i < r.minStem {
			continue
		}
		if tail := w[i+len(r.from):]; slices.Contains(r.tails, tail) {
			return w[:i] + r.to + tail
		}
	}
	return w
}

// spellingRule replaces from with to when the word ends in from + one of
// tails, with at least minStem letters before from.
type spellingRule struct {
	from, to string
	tails    []string
	minStem  int
}

var (
	izeTails    = []string{"e", "es", "ed", "ing", "er", "ers", "ation", "ations"}
	ourTails    = []string{"", "s", "ed", "ing", "ite", "ites", "hood", "hoods", "ful", "able", "er", "ers"}
	endTails    = []string{"", "s"}
	licTails    = []string{"e", "es", "ed", "ing"}
	doubleTails = []string{"", "s", "ed", "ing", "er", "ers"}
)

var spellingRules = []spellingRule{
	{"is", "iz", izeTails, 3},
	{"ys", "yz", []string{"e", "es", "ed", "ing", "er", "ers"}, 3},
	{"our", "or", ourTails, 3},
	{"tre", "ter", endTails, 2},
	{"cenc", "cens", licTails, 2},
	{"fenc", "fens", licTails, 2},
	{"ogue", "og", endTails, 3},
	{"mme", "m", endTails, 4},
	{"ll", "l", doubleTails, 4},
}

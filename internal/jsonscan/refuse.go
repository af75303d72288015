package jsonscan

import (
	"encoding/json"
	"regexp"
	"sync"
)

// What is read here is for refusing a message that cannot be decoded (too
// deep, too large, not JSON) for that message alone: to say which request
// failed, its id must be found in bytes a decoder gave up on.

// Deeper reports whether b nests arrays and objects deeper than max,
// counting the brackets outside strings, as a decoder that stops at max
// would count them (go-sdk's, at MaxDepth: a message's own object is at
// depth 1). It decides nothing else: b may be invalid JSON.
func Deeper(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// stringEnd returns the index just after the string that starts at i, or
// len(b) when it does not end.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// Kind is what a JSON-RPC message is, as far as Envelope can tell.
type Kind int

const (
	Unknown  Kind = iota
	Request       // it has a method: a request, or a notification without an id
	Response      // it has a result or an error, and no method
)

// Envelope reads what it can of msg, a JSON-RPC message that may be
// invalid, cut short, or nested too deeply to decode: its id as written (a
// number or a string; nil when it has none, or one of another kind, which
// JSON-RPC does not allow), and its kind. Only the message object's own
// members count, found by their exact keys; the values of the others are
// skipped however deeply they nest. Of repeated ids the last counts, as
// decoders take it. It never fails.
func Envelope(msg []byte) (id []byte, kind Kind) {
	i := SkipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return nil, Unknown
	}
	var method, response bool
	depth, expectKey := 0, false
	for ; i < len(msg); i++ {
		switch c := msg[i]; c {
		case '{', '[':
			depth++
			expectKey = depth == 1 && c == '{'
		case '}', ']':
			depth--
			if depth <= 0 {
				return id, kindOf(method, response)
			}
		case ',':
			expectKey = depth == 1
		case '"':
			end := stringEnd(msg, i)
			if !expectKey {
				i = end - 1
				continue
			}
			expectKey = false
			key := msg[i+1 : max(end-1, i+1)]
			j := SkipSpace(msg, end)
			if j >= len(msg) || msg[j] != ':' {
				i = end - 1
				continue
			}
			j = SkipSpace(msg, j+1)
			switch string(key) {
			case "id":
				id = scalarID(msg, j)
			case "method":
				method = true
			case "result", "error":
				response = true
			}
			i = j - 1
		}
	}
	return id, kindOf(method, response)
}

func kindOf(method, response bool) Kind {
	switch {
	case method:
		return Request
	case response:
		return Response
	}
	return Unknown
}

// scalarID returns the number or string at i, if it is one (whole, and
// valid JSON), else nil.
func scalarID(msg []byte, i int) []byte {
	if i >= len(msg) {
		return nil
	}
	var end int
	switch c := msg[i]; {
	case c == '"':
		end = stringEnd(msg, i)
	case c == '-' || (c >= '0' && c <= '9'):
		end = i
		for end < len(msg) && !isDelim(msg[end]) {
			end++
		}
		if end == len(msg) {
			return nil // cut short: more digits may have followed
		}
	default:
		return nil
	}
	v := msg[i:end]
	if !json.Valid(v) {
		return nil
	}
	return v
}

// tailID matches the end of a message whose id is its last member (as the
// TypeScript SDK writes them: {"method":…,"params":…,"jsonrpc":"2.0","id":3}).
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$`)
})

// TailID returns the id of a message from its last bytes, when the id is
// its last member, or nil: for a message too large to keep whole, whose
// start (Envelope) did not name it.
func TailID(tail []byte) []byte {
	m := tailID().FindSubmatch(tail)
	if m == nil || !json.Valid(m[1]) {
		return nil
	}
	return m[1]
}

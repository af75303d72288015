package pinning

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// canonical writes JSON as encoding/json writes what it decodes from it
// into an any: objects with their keys sorted (the last of equal keys
// kept), numbers as float64s, strings escaped as json.Marshal escapes
// them, no spaces. JSON that does not decode into an any (a syntax error,
// a number out of float64's range) is returned as it is. That round trip
// is what pins have always hashed (roundTrip, which FuzzCanonical holds
// this to); walking the bytes once gives the same without building and
// encoding a tree of maps, which is most of what hashing a tool cost.
func canonical(raw []byte) []byte {
	if !json.Valid(raw) {
		return raw
	}
	return canonicalValid(raw)
}

// canonicalValid is canonical of JSON known to be valid: what json.Marshal
// wrote.
func canonicalValid(raw []byte) []byte {
	c := canonicalizer{in: raw, starts: make([]int, 0, 16), ends: make([]int, 0, 16)}
	c.findEnds()
	out, ok := c.value(make([]byte, 0, len(raw)))
	if !ok {
		return raw
	}
	return out
}

// canonicalizer walks JSON that json.Valid accepted.
type canonicalizer struct {
	in  []byte
	pos int
	// starts and ends are where each object and array begins and ends
	// in in, in the order they begin: an object's members are sorted
	// before they are written, so that each is written once, however deep
	// (moving written members instead would copy a member once for each
	// object around it).
	starts, ends []int
	members      [][]member // by depth, reused
	depth        int
}

// member is an object's member: its key decoded, and where its value is
// in the input.
type member struct {
	key        []byte
	start, end int
}

// findEnds fills starts and ends.
func (c *canonicalizer) findEnds() {
	var open []int // indexes into starts of the containers not yet closed
	for i := 0; i < len(c.in); i++ {
		switch c.in[i] {
		case '"':
			for i++; c.in[i] != '"'; i++ {
				if c.in[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			open = append(open, len(c.starts))
			c.starts = append(c.starts, i)
			c.ends = append(c.ends, 0)
		case '}', ']':
			c.ends[open[len(open)-1]] = i + 1
			open = open[:len(open)-1]
		}
	}
}

// end returns where the value that begins at c.pos ends.
func (c *canonicalizer) end() int {
	switch c.in[c.pos] {
	case '{', '[':
		i, _ := slices.BinarySearch(c.starts, c.pos)
		return c.ends[i]
	case '"':
		i := c.pos + 1
		for ; c.in[i] != '"'; i++ {
			if c.in[i] == '\\' {
				i++
			}
		}
		return i + 1
	}
	i := c.pos
	for i < len(c.in) && strings.IndexByte(",}] \t\n\r", c.in[i]) < 0 {
		i++
	}
	return i
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at c.pos to out. It
// reports false for a number out of float64's range.
func (c *canonicalizer) value(out []byte) ([]byte, bool) {
	c.skipSpace()
	switch b := c.in[c.pos]; b {
	case '{':
		return c.object(out)
	case '[':
		return c.array(out)
	case '"':
		return appendString(out, c.stringToken()), true
	case 't':
		c.pos += len("true")
		return append(out, "true"...), true
	case 'f':
		c.pos += len("false")
		return append(out, "false"...), true
	case 'n':
		c.pos += len("null")
		return append(out, "null"...), true
	default:
		return c.number(out)
	}
}

// object writes the members sorted by key, the last of equal keys kept,
// as a decoding into a map and its encoding would. json.Marshal writes a
// map's keys sorted already; only then are they not sorted again.
func (c *canonicalizer) object(out []byte) ([]byte, bool) {
	end := c.end()
	c.pos++ // {
	if c.depth == len(c.members) {
		c.members = append(c.members, nil)
	}
	ms := c.members[c.depth][:0]
	sorted := true
	for {
		c.skipSpace()
		if c.in[c.pos] == '}' {
			break
		}
		m := member{key: decodeString(c.stringToken())}
		c.skipSpace()
		c.pos++ // :
		c.skipSpace()
		m.start, m.end = c.pos, c.end()
		if len(ms) > 0 && bytes.Compare(ms[len(ms)-1].key, m.key) >= 0 {
			sorted = false
		}
		ms = append(ms, m)
		c.pos = m.end
		c.skipSpace()
		if c.in[c.pos] == ',' {
			c.pos++
		}
	}
	if !sorted {
		slices.SortStableFunc(ms, func(a, b member) int {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c
			}
			return b.start - a.start // the last first
		})
	}
	c.members[c.depth] = ms
	c.depth++
	defer func() { c.depth-- }()
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 && bytes.Equal(ms[i-1].key, m.key) {
			// Dropped, as a decoding drops it, but decoded all the same:
			// a number out of range fails the whole.
			if !c.numbersFit(m.start, m.end) {
				return nil, false
			}
			continue
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendKey(out, m.key)
		out = append(out, ':')
		c.pos = m.start
		var ok bool
		if out, ok = c.value(out); !ok {
			return nil, false
		}
	}
	c.pos = end
	return append(out, '}'), true
}

func (c *canonicalizer) array(out []byte) ([]byte, bool) {
	c.pos++ // [
	out = append(out, '[')
	for first := true; ; first = false {
		c.skipSpace()
		if c.in[c.pos] == ']' {
			c.pos++
			return append(out, ']'), true
		}
		if !first {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = c.value(out); !ok {
			return nil, false
		}
		c.skipSpace()
		if c.in[c.pos] == ',' {
			c.pos++
		}
	}
}

// stringToken returns the string at c.pos, quotes included.
func (c *canonicalizer) stringToken() []byte {
	start := c.pos
	c.pos++
	for {
		switch c.in[c.pos] {
		case '\\':
			c.pos += 2
		case '"':
			c.pos++
			return c.in[start:c.pos]
		default:
			c.pos++
		}
	}
}

func (c *canonicalizer) number(out []byte) ([]byte, bool) {
	start := c.pos
	for c.pos < len(c.in) && strings.IndexByte("+-.0123456789eE", c.in[c.pos]) >= 0 {
		c.pos++
	}
	tok := c.in[start:c.pos]
	// An integer of up to 15 digits is a float64 written the same way.
	if digits := bytes.TrimPrefix(tok, []byte("-")); len(digits) <= 15 && bytes.IndexAny(digits, ".eE") < 0 {
		return append(out, tok...), true
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return nil, false
	}
	return appendFloat(out, f), true
}

// numbersFit reports whether every number in in[start:end] is within
// float64's range.
func (c *canonicalizer) numbersFit(start, end int) bool {
	for i := start; i < end; i++ {
		switch b := c.in[i]; {
		case b == '"':
			for i++; c.in[i] != '"'; i++ {
				if c.in[i] == '\\' {
					i++
				}
			}
		case b == '-' || '0' <= b && b <= '9':
			j := i
			for j < end && strings.IndexByte("+-.0123456789eE", c.in[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(string(c.in[i:j]), 64); err != nil {
				return false
			}
			i = j - 1
		}
	}
	return true
}

// appendFloat writes f as encoding/json writes a float64.
func appendFloat(out []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}

// decodeString returns a string token's value: the bytes between its
// quotes when it has no escape and is valid UTF-8 (what the decoding
// would keep as it is).
func decodeString(tok []byte) []byte {
	if bytes.IndexByte(tok, '\\') < 0 && utf8.Valid(tok) {
		return tok[1 : len(tok)-1]
	}
	var s string
	_ = json.Unmarshal(tok, &s) // valid: json.Valid accepted the whole
	return []byte(s)
}

// appendString appends a string token as json.Marshal writes its value:
// as it is when it is written so already (the usual case: it came from
// json.Marshal).
func appendString(out, tok []byte) []byte {
	if marshalled(tok) {
		return append(out, tok...)
	}
	return appendKey(out, decodeString(tok))
}

// appendKey appends s as json.Marshal writes a string.
func appendKey(out []byte, s []byte) []byte {
	if plain(s) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	b, _ := json.Marshal(string(s))
	return append(out, b...)
}

// plain reports whether json.Marshal writes s between quotes as it is.
func plain(s []byte) bool {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b < 0x20 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// marshalled reports whether a string token is written as json.Marshal
// writes its value: escapes only where it escapes (\" \\ \b \f \n \r \t,
// \u00XX in lowercase hex for the other control characters, \u003c
// \u003e \u0026 for < > &, \u2028 \u2029), valid UTF-8 elsewhere.
func marshalled(tok []byte) bool {
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b == '\\':
			if i+1 >= len(s) {
				return false
			}
			switch s[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
				if i+6 > len(s) || !canonicalEscape(string(s[i+2:i+6])) {
					return false
				}
				i += 6
				continue
			}
			return false
		case b < 0x20 || b == '"' || b == '<' || b == '>' || b == '&':
			return false
		case b < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return false
			}
			i += size
		}
	}
	return true
}

// canonicalEscape reports whether \uXXXX is how json.Marshal writes the
// character XXXX.
func canonicalEscape(hex string) bool {
	switch hex {
	case "003c", "003e", "0026", "2028", "2029":
		return true
	case "0008", "000c", "000a", "000d", "0009": // written \b \f \n \r \t
		return false
	}
	const digits = "0123456789abcdef"
	return hex[0] == '0' && hex[1] == '0' && (hex[2] == '0' || hex[2] == '1') && strings.IndexByte(digits, hex[3]) >= 0
}

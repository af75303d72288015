// Package jsonscan reads the structure of JSON without decoding it: where
// an object's members and an array's elements lie, and plain strings. It
// is for the hot paths that pass JSON on as bytes (see upstream's
// scanEnvelope and the front's fast path), where decoding would be most of
// the cost. Its functions take valid JSON, or refuse (ok false) what they
// cannot be sure of; they never decide validity for a decoder.
package jsonscan

// MaxDepth is go-sdk's bound on nesting (internal/json defaultMaxDepth):
// SkipValue refuses deeper values, as its decoder does.
const MaxDepth = 1000

// Key reads an object key at i and the colon after it, returning the key
// and the index after the colon. A key with an escape is refused: it could
// spell one of the envelope's keys.
func Key(line []byte, i int) (key []byte, next int, ok bool) {
	if i >= len(line) || line[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c == '"':
			k := SkipSpace(line, j+1)
			if k >= len(line) || line[k] != ':' {
				return nil, 0, false
			}
			return line[i+1 : j], k + 1, true
		}
	}
	return nil, 0, false
}

// SkipValue returns the index just after the JSON value at i. Nesting is
// counted from the message's own object (depth 1), as go-sdk counts it.
func SkipValue(line []byte, i int) (int, bool) {
	if i >= len(line) {
		return 0, false
	}
	switch line[i] {
	case '"':
		return skipString(line, i)
	case '{', '[':
	default:
		j := i
		for j < len(line) && !isDelim(line[j]) {
			j++
		}
		return j, j > i
	}
	depth := 1
	for j := i; j < len(line); j++ {
		switch line[j] {
		case '"':
			end, ok := skipString(line, j)
			if !ok {
				return 0, false
			}
			j = end - 1
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return 0, false
			}
		case '}', ']':
			depth--
			if depth == 1 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// skipString returns the index just after the string that starts at i.
func skipString(line []byte, i int) (int, bool) {
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func SkipSpace(line []byte, i int) int {
	for i < len(line) {
		switch line[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// PlainString returns the contents of a JSON string of printable ASCII
// without escapes: one whose bytes are its value, whatever a decoder does
// with escapes or invalid UTF-8.
func PlainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(s), true
}

// Members calls f with each key and value of obj, a valid JSON object,
// until f returns false; it returns false then, or for a key with an
// escape (which could spell any key).
func Members(obj []byte, f func(key, value []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for {
		key, next, ok := Key(obj, i)
		if !ok {
			return false
		}
		start := SkipSpace(obj, next)
		end, ok := SkipValue(obj, start)
		if !ok || !f(key, obj[start:end]) {
			return false
		}
		i = SkipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		if obj[i] == '}' {
			return true
		}
		if obj[i] != ',' {
			return false
		}
		i = SkipSpace(obj, i+1)
	}
}

// Elements calls f with each element of arr, a valid JSON array, until f
// returns false; it returns false then.
func Elements(arr []byte, f func(elem []byte) bool) bool {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for {
		end, ok := SkipValue(arr, i)
		if !ok || !f(arr[i:end]) {
			return false
		}
		i = SkipSpace(arr, end)
		if i >= len(arr) {
			return false
		}
		if arr[i] == ']' {
			return true
		}
		if arr[i] != ',' {
			return false
		}
		i = SkipSpace(arr, i+1)
	}
}

// Package jsonc parses and edits JSON with comments and trailing commas
// (JWCC, through github.com/tailscale/hujson), the format of Switchboard's
// own configuration files and of several hosts' files. Edits work on the
// syntax tree, so that everything outside the member that changes stays
// byte for byte: comments, blank lines, order and the user's indentation.
package jsonc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tailscale/hujson"
)

var (
	hujsonPosRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+), column (\d+)`) })
	hujsonPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:hujson: )?line \d+, column \d+: `) })
)

// MaxDepth bounds how deeply a file nests arrays and objects. The parser
// recurses once per level, so a few megabytes of '[' would exhaust the
// stack, which kills the process instead of failing the file; no
// configuration needs more than a handful of levels.
const MaxDepth = 1000

// Parse parses JSON with comments and trailing commas, refusing nesting
// deeper than MaxDepth before the parser can recurse into it.
func Parse(data []byte) (hujson.Value, error) {
	if off := tooDeep(data); off >= 0 {
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
		return hujson.Value{}, fmt.Errorf("line %d, column %d: arrays and objects nest deeper than %d levels", line, col, MaxDepth)
	}
	return hujson.Parse(data)
}

// tooDeep returns the offset of the first bracket that opens a level deeper
// than MaxDepth, or -1. Brackets in strings and comments do not count. Where
// the text is not valid JSONC it may count more than the parser would reach,
// never less.
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case bytes.HasPrefix(data[i:], []byte("//")):
				j := bytes.IndexByte(data[i:], '\n')
				if j < 0 {
					return -1
				}
				i += j
			case bytes.HasPrefix(data[i:], []byte("/*")):
				j := bytes.Index(data[i+2:], []byte("*/"))
				if j < 0 {
					return -1
				}
				i += j + 3
			}
		case '[', '{':
			if depth++; depth > MaxDepth {
				return i
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// Position returns where a parse error is, and its message without the
// position (and without the parser's name): the text to show after
// "FILE:LINE:COL: ". Line and col are 0 when the error names no position.
// The message never quotes a string of the text, which may be a secret.
func Position(err error) (line, col int, msg string) {
	msg = hujsonPrefixRE().ReplaceAllString(err.Error(), "")
	if lit, ok := strings.CutPrefix(msg, "invalid literal: "); ok && strings.HasPrefix(lit, `"`) {
		// The parser quotes the whole string, which may be a pasted
		// token with a stray line break: never echo it.
		msg = "invalid string: it holds a raw control character (such as a tab or a line break) or a bad escape (the text is not shown)"
	}
	m := hujsonPosRE().FindStringSubmatch(err.Error())
	if m == nil {
		return 0, 0, msg
	}
	line, _ = strconv.Atoi(m[1])
	col, _ = strconv.Atoi(m[2])
	return line, col, msg
}

// Edits work on the syntax tree, so comments, blank lines
// and the user's indentation survive; only the member that changes is
// written anew, indented like its siblings.

// MemberIndex returns the index of key in obj, or -1.
func MemberIndex(obj *hujson.Object, key string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == key {
			return i
		}
	}
	return -1
}

// multiline reports whether obj puts its members on lines of their own, and
// the indentation of those lines. parentIndent is the indentation of the
// member that holds obj; callers edit objects one level down from the top,
// so an empty obj is indented one more such step.
func multiline(obj *hujson.Object, parentIndent string) (bool, string) {
	if len(obj.Members) > 0 {
		before := string(obj.Members[0].Name.BeforeExtra)
		if i := strings.LastIndexByte(before, '\n'); i >= 0 {
			if line := before[i+1:]; blanks(line) == line {
				return true, line
			}
			return true, parentIndent + "  " // the line starts with the end of a comment
		}
		return false, ""
	}
	step := parentIndent
	if step == "" {
		step = "  "
	}
	after := string(obj.AfterExtra)
	if i := strings.LastIndexByte(after, '\n'); i >= 0 {
		return true, blanks(after[i+1:]) + step
	}
	return true, parentIndent + step
}

// blanks returns the spaces and tabs that start s: the indentation of a line,
// without a comment that may end on it.
func blanks(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// indentStep returns the file's indentation step: the difference between a
// member's indentation and its parent's, or two spaces.
func indentStep(indent, parentIndent string) string {
	if step, ok := strings.CutPrefix(indent, parentIndent); ok && step != "" && strings.Trim(step, " \t") == "" {
		return step
	}
	return "  "
}

// SetMember sets key in obj to the JSON value val, replacing an existing
// member in place or appending a new one after the last.
func SetMember(obj *hujson.Object, key string, val any, parentIndent string) error {
	multi, indent := multiline(obj, parentIndent)
	step := indentStep(indent, parentIndent)
	text, err := marshalAt(val, indent, step, multi)
	if err != nil {
		return err
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	if i := MemberIndex(obj, key); i >= 0 {
		v.AfterExtra = obj.Members[i].Value.AfterExtra
		obj.Members[i].Value = v
		return nil
	}
	name := hujson.Value{Value: hujson.String(key)}
	if !multi {
		name.BeforeExtra = hujson.Extra(" ")
		if len(obj.Members) == 0 {
			name.BeforeExtra = nil
		}
		obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: v})
		return nil
	}
	// Comments that trail the last member stay on its line; the closing
	// brace keeps its own indentation.
	after := string(obj.AfterExtra)
	lead, closing := "\n", strings.TrimSuffix(indent, step)
	if i := strings.LastIndexByte(after, '\n'); i >= 0 {
		lead, closing = after[:i+1], after[i+1:]
	}
	name.BeforeExtra = hujson.Extra(lead + indent)
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		v.AfterExtra = hujson.Extra{} // keep a trailing comma where the file had one
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: v})
	obj.AfterExtra = hujson.Extra("\n" + closing)
	return nil
}

// RemoveMember deletes key from obj and reports whether it was there.
//
// A comment after a member's comma, on the same line, is held as the start
// of the text before the next member (or after the last). So the removed
// member's leading text begins with the tail of the line before it, which
// stays, and the text after it begins with the tail of its own line, which
// goes with it.
func RemoveMember(obj *hujson.Object, key string) bool {
	i := MemberIndex(obj, key)
	if i < 0 {
		return false
	}
	prevTail, _, _ := splitLine(obj.Members[i].Name.BeforeExtra)
	last := i == len(obj.Members)-1
	after := obj.AfterExtra
	if !last {
		after = obj.Members[i+1].Name.BeforeExtra
	}
	if _, rest, ok := splitLine(after); ok {
		after = rest
	}
	after = hujson.Extra(string(prevTail) + string(after))
	trailingComma := obj.Members[i].Value.AfterExtra != nil // on the last member only
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if !last {
		obj.Members[i].Name.BeforeExtra = after
		return true
	}
	obj.AfterExtra = after
	if n := len(obj.Members); n > 0 {
		// The new last member keeps the file's trailing comma, or the lack
		// of one; a last value's AfterExtra stands for the comma.
		v := &obj.Members[n-1].Value
		switch {
		case trailingComma && v.AfterExtra == nil:
			v.AfterExtra = hujson.Extra{}
		case !trailingComma && v.AfterExtra != nil:
			obj.AfterExtra = hujson.Extra(string(v.AfterExtra) + string(obj.AfterExtra))
			v.AfterExtra = nil
		}
	}
	return true
}

// splitLine splits extra (whitespace and comments) after its first line
// break outside a block comment; ok is false when it has none.
func splitLine(extra hujson.Extra) (line, rest hujson.Extra, ok bool) {
	for i := 0; i < len(extra); i++ {
		switch {
		case extra[i] == '\n':
			return extra[:i+1], extra[i+1:], true
		case bytes.HasPrefix(extra[i:], []byte("//")): // may hold "/*"
			j := bytes.IndexByte(extra[i:], '\n')
			if j < 0 {
				return nil, extra, false
			}
			return extra[:i+j+1], extra[i+j+1:], true
		case bytes.HasPrefix(extra[i:], []byte("/*")):
			j := bytes.Index(extra[i+2:], []byte("*/"))
			if j < 0 {
				return nil, extra, false
			}
			i += j + 3
		}
	}
	return nil, extra, false
}

func marshalAt(val any, indent, step string, multi bool) ([]byte, error) {
	if !multi {
		return json.Marshal(val)
	}
	return json.MarshalIndent(val, indent, step)
}

// IndentOf returns the indentation of the line a member name starts on.
func IndentOf(m *hujson.ObjectMember) string {
	before := string(m.Name.BeforeExtra)
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		return blanks(before[i+1:])
	}
	return ""
}

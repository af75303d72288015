package hosts

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML, which has no editor that keeps
// comments: these functions edit its text around the tables they find.

// tomlTable renders the entry as the table [key.name]. Names are bare keys
// (ValidName); values are strings, lists of strings and booleans.
func tomlTable(key, name string, entry snippetObject) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\n", key, name)
	for _, f := range entry {
		fmt.Fprintf(&b, "%s = %s\n", f.key, tomlValue(f.val))
	}
	return b.String()
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case bool:
		return fmt.Sprint(v)
	}
	panic(fmt.Sprintf("config: no TOML form for %T", v)) // the host table holds no other kind
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// appendTOML adds table, a sub-table of key, at the end of data, after a
// blank line. An inline table cannot be extended so: TOML forbids it, even
// where a lenient parser accepts it.
func appendTOML(data []byte, key, table string) ([]byte, error) {
	var root map[string]any
	md, err := toml.Decode(string(data), &root)
	if err != nil {
		return nil, err
	}
	header := slices.ContainsFunc(tomlBlocks(data), func(b tomlBlock) bool { return slices.Equal(b.key, []string{key}) })
	assigned := slices.ContainsFunc(md.Keys(), func(k toml.Key) bool { return slices.Equal(k, toml.Key{key}) })
	if assigned && !header { // only "key = {…}" lists the key itself without a [key] header
		return nil, fmt.Errorf("%s is an inline table, which a [%s.NAME] table cannot extend (hint: add the entry inside it by hand)", key, key)
	}
	out := slices.Clone(data)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if !bytes.HasSuffix(out, []byte("\n\n")) {
		out = append(out, '\n')
	}
	return append(out, table...), nil
}

// replaceTOMLTable replaces the table [key.name], and the tables under it,
// with table. It refuses a definition that is not written as such a table
// (an inline table, dotted keys). Blank and comment lines that end a table
// stay: they usually introduce what follows.
func replaceTOMLTable(data []byte, key, name, table string) ([]byte, error) {
	var blocks []tomlBlock
	own := false
	for _, b := range tomlBlocks(data) {
		if len(b.key) >= 2 && b.key[0] == key && b.key[1] == name {
			blocks = append(blocks, b)
			own = own || (len(b.key) == 2 && !b.array)
		}
	}
	if !own {
		return nil, fmt.Errorf("%s.%s is not written as a [%s.%s] table (hint: remove it by hand and run setup again)", key, name, key, name)
	}
	out := slices.Clone(data)
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if i == 0 {
			out = slices.Concat(out[:b.start], []byte(table), out[b.end:])
			break
		}
		// A sub-table goes with the blank lines before it.
		start := b.start
		for start > 0 {
			prev := lineStart0(data, start-1)
			if len(bytes.TrimSpace(data[prev:start])) > 0 {
				break
			}
			start = prev
		}
		out = slices.Concat(out[:start], out[b.end:])
	}
	return out, nil
}

// tomlBlock is a table header and the key/value lines after it, up to the
// last line that holds more than blanks and comments.
type tomlBlock struct {
	start, end int      // byte offsets: the header line's start, the end of the last content line
	key        []string // the header's key
	array      bool     // [[key]]
}

// tomlBlocks finds the table headers of a TOML document and the extent of
// each table's content. A header is a line that starts with '[' outside any
// value: strings, comments and multi-line arrays are skipped, so a '[' at
// the start of a line inside them is not one.
func tomlBlocks(data []byte) []tomlBlock {
	var blocks []tomlBlock
	closeBlock := func(last int) {
		if n := len(blocks); n > 0 {
			blocks[n-1].end = lineEnd(data, max(last, blocks[n-1].end-1))
		}
	}
	last := 0 // offset of the last content byte
	depth, lineStart := 0, true
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case lineStart && depth == 0 && (c == ' ' || c == '\t' || c == '\r'):
			i++
		case lineStart && depth == 0 && c == '[':
			closeBlock(last)
			end := lineEnd(data, i)
			blocks = append(blocks, tomlHeader(data, lineStart0(data, i), end))
			last, i = end-1, end
		case c == '\n':
			lineStart = true
			i++
		case c == '#':
			lineStart = false
			i = lineEnd(data, i) - 1 // stop before the line break
			if i < 0 || data[i] != '\n' {
				i = len(data)
			}
		case c == '"' || c == '\'':
			lineStart = false
			i = skipTOMLString(data, i)
			last = i - 1
		default:
			lineStart = false
			switch c {
			case '[', '{':
				depth++
			case ']', '}':
				depth = max(depth-1, 0)
			}
			last = i
			i++
		}
	}
	closeBlock(last)
	return blocks
}

// lineStart0 returns the offset where the line holding i starts.
func lineStart0(data []byte, i int) int { return bytes.LastIndexByte(data[:i], '\n') + 1 }

// lineEnd returns the offset just after the line break that ends the line
// holding i, or len(data).
func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

// tomlHeader reads the key of the header line data[start:end].
func tomlHeader(data []byte, start, end int) tomlBlock {
	b := tomlBlock{start: start, end: end}
	line := strings.TrimSpace(string(data[start:end]))
	b.array = strings.HasPrefix(line, "[[")
	var root map[string]any
	if md, err := toml.Decode(line+"\n", &root); err == nil {
		if keys := md.Keys(); len(keys) > 0 {
			b.key = keys[len(keys)-1]
		}
	}
	return b
}

// skipTOMLString returns the offset just after the string that starts at
// i: basic or literal, on one line or multi-line.
func skipTOMLString(data []byte, i int) int {
	q := data[i]
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		j := i + 3
		for j < len(data) {
			switch {
			case q == '"' && data[j] == '\\':
				j += 2
			case bytes.HasPrefix(data[j:], []byte{q, q, q}):
				j += 3
				for n := 0; n < 2 && j < len(data) && data[j] == q; n++ { // """a""""" ends with quotes in the string
					j++
				}
				return j
			default:
				j++
			}
		}
		return len(data)
	}
	for j := i + 1; j < len(data); j++ {
		switch {
		case q == '"' && data[j] == '\\':
			j++
		case data[j] == q:
			return j + 1
		case data[j] == '\n':
			return j // not valid TOML; the line ends the string
		}
	}
	return len(data)
}

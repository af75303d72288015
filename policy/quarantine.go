package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool pinning guards against a server that changes what a tool says or
// does after the user started to rely on it (a "rug pull"): the first
// definition seen of each tool is pinned, and a later, different one is
// quarantined (not callable) until the user accepts it. The engine pins
// and compares; a host sees the outcome, a Quarantine.

// Quarantine is a tool that may not be called until the user accepts its
// current definition.
type Quarantine struct {
	Server, Tool string
	New          bool      // a tool new on a known server, under pin "strict": nothing was accepted
	Since        time.Time // when the server first offered a definition that was not accepted
	Old, Current string    // canonical JSON of the accepted and the offered definition
	Pending      string    // the offered definition's hash, which approving accepts

	// Err, when set, is why the server's pins could not be read or
	// written: nothing is known to be accepted, so every tool of the
	// server is quarantined (fail closed), and none can be approved until
	// the pins can be read again.
	Err error
}

// Approved returns the definition the user accepted, as the agent may see
// it while the tool is quarantined; nil for a tool that has none (new
// under pin "strict", or pins that could not be read).
func (q *Quarantine) Approved() *mcp.Tool {
	if q.Old == "" || q.Err != nil {
		return nil
	}
	t := new(mcp.Tool)
	if json.Unmarshal([]byte(q.Old), t) != nil {
		return nil
	}
	t.Name = q.Tool
	return t
}

// Diff shows what changed, bounded to maxLines lines: the server's text,
// which is untrusted data.
func (q *Quarantine) Diff(maxLines int) []string {
	switch {
	case q.Err != nil:
		return bounded(append([]string{"the definition offered (the pins could not be read):"}, indented(q.Current)...), maxLines)
	case q.New:
		return bounded(append([]string{"new tool, never approved:"}, indented(q.Current)...), maxLines)
	}
	return diff(q.Old, q.Current, maxLines)
}

// maxDiffInput bounds the lines a diff compares: it takes time and memory
// in the product of the two lengths.
const maxDiffInput = 1000

// diff returns the lines that differ between two JSON documents, indented,
// as "- " (only in old) and "+ " (only in cur), each line cut to 300
// bytes, at most maxLines lines in all.
func diff(old, cur string, maxLines int) []string {
	a, b := indented(old), indented(cur)
	if len(a) > maxDiffInput || len(b) > maxDiffInput {
		return []string{fmt.Sprintf("the definitions are too long to compare line by line (%d and %d lines); describe shows the new one", len(a), len(b))}
	}
	// Longest common subsequence, by dynamic programming from the end.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+cut(a[i], 300))
			i++
		default:
			out = append(out, "+ "+cut(b[j], 300))
			j++
		}
	}
	return bounded(out, maxLines)
}

func bounded(lines []string, max int) []string {
	if max > 0 && len(lines) > max {
		n := len(lines) - max + 1
		return append(lines[:max-1:max-1], fmt.Sprintf("… %d more lines", n))
	}
	return lines
}

func indented(doc string) []string {
	if doc == "" {
		return nil
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(doc), "", "  ") != nil {
		return []string{doc}
	}
	return strings.Split(b.String(), "\n")
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

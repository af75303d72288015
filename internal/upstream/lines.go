package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// DefaultMaxMessageBytes bounds one message from a server.
const DefaultMaxMessageBytes = 16 << 20

// edgeBytes is how much of the start and end of an oversized line is kept to
// find its request id.
const edgeBytes = 1024

// A lineReader reads a stdio server's stdout and passes on only what the
// SDK's decoder can use: one JSON value per line, at most limit bytes.
//
//   - A line that is not JSON (a banner, a log line printed to stdout) is
//     dropped with a warning, as the TypeScript SDK does, instead of ending
//     the connection.
//   - A line over limit is discarded as it streams, without buffering it; if
//     it is a response whose id can be read from its start or end, an error
//     response for that id takes its place, so that the one request fails at
//     once and the connection stays usable.
//   - Tool results and prompts with content types the SDK cannot decode are
//     repaired (see sanitizeMessage).
//
// The SDK's own limit (16 MiB by default) would end the connection instead.
type lineReader struct {
	r       *bufio.Reader
	limit   int
	log     *slog.Logger
	buf     []byte // the current line
	pending []byte // the part of buf not yet returned
	warned  int    // warnings logged, to bound them

	// claim, if set, is offered each line before it is inspected; a line
	// it returns true for is taken (a response to a call on the fast path,
	// see stdioConn.callRaw) and not returned by next. It must not keep
	// the line: the buffer is reused.
	claim func(line []byte) bool
}

func newLineReader(r io.Reader, limit int, log *slog.Logger) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit, log: log}
}

func (l *lineReader) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		line, err := l.next()
		if err != nil {
			return 0, err
		}
		l.pending = line
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// Close does nothing: the process owns the pipe.
func (l *lineReader) Close() error { return nil }

// next returns the next usable line, newline-terminated.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, head, tail, err := l.readLine()
		if err != nil {
			return nil, err
		}
		if line == nil {
			if resp := oversizeResponse(head, tail, l.limit); resp != nil {
				l.warn("discarded an oversized response", "limit", l.limit)
				if l.claim != nil && l.claim(resp[:len(resp)-1]) {
					continue
				}
				return resp, nil
			}
			l.warn("discarded an oversized message", "limit", l.limit)
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			l.warn("ignored a line of stdout that is not JSON", "line", preview(line))
			continue
		}
		if l.claim != nil && l.claim(line) {
			continue
		}
		fixed, ok := inspect(line)
		if !ok {
			// A response too deep for encoding/json (past 10,000 levels)
			// fails its call at once, with the reason.
			if resp := refusedResponse(line, unreadable(line, nil)); resp != nil {
				l.warn("refused a response that cannot be read", "reason", unreadable(line, nil))
				if l.claim != nil && l.claim(resp[:len(resp)-1]) {
					continue
				}
				return resp, nil
			}
			l.warn("ignored a line of stdout that is not JSON", "line", preview(line))
			continue
		}
		return append(fixed, '\n'), nil
	}
}

// unreadable says why a line from a server cannot be read: it nests
// deeper than go-sdk decodes, or decodeErr, or it is not JSON.
func unreadable(line []byte, decodeErr error) string {
	switch {
	case jsonscan.Deeper(line, jsonscan.MaxDepth):
		return fmt.Sprintf("the server's response nests deeper than %d levels, more than switchboard reads", jsonscan.MaxDepth)
	case decodeErr != nil:
		return "the server's response cannot be read: " + decodeErr.Error()
	}
	return "the server's response is not valid JSON"
}

// refusedResponse returns an error response, newline-terminated, standing
// in for line, a response that cannot be read, for its id, saying why; or
// nil if line is not a response with a readable id. Its call fails at once,
// instead of waiting for an answer that was thrown away, and the
// connection stays.
func refusedResponse(line []byte, why string) []byte {
	id, kind := jsonscan.Envelope(line)
	if kind != jsonscan.Response || id == nil {
		return nil
	}
	text, _ := json.Marshal(why)
	resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, id, text)
	if _, err := jsonrpc.DecodeMessage(resp); err != nil {
		return nil // an id go-sdk does not read
	}
	return append(resp, '\n')
}

// readLine reads one line. A line over the limit is not kept: line is nil and
// head and tail hold its first and last edgeBytes.
func (l *lineReader) readLine() (line, head, tail []byte, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not keep a large buffer for small messages
	}
	l.buf = l.buf[:0]
	over := false
	for {
		frag, err := l.r.ReadSlice('\n')
		switch {
		case over:
			tail = keepTail(tail, frag)
		case len(l.buf)+len(frag) > l.limit:
			over = true
			head = bytes.Clone(l.buf[:min(len(l.buf), edgeBytes)])
			if len(head) < edgeBytes {
				head = append(head, frag[:min(len(frag), edgeBytes-len(head))]...)
			}
			tail = keepTail(keepTail(nil, l.buf), frag)
			l.buf = nil
		default:
			l.buf = append(l.buf, frag...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(l.buf) > 0 || over):
			// The last line has no newline; the next read returns EOF.
		case err != nil:
			return nil, nil, nil, err
		}
		if over {
			return nil, head, tail, nil
		}
		return l.buf, nil, nil, nil
	}
}

func keepTail(tail, frag []byte) []byte {
	tail = append(tail, frag...)
	if len(tail) > edgeBytes {
		tail = append(tail[:0], tail[len(tail)-edgeBytes:]...)
	}
	return tail
}

func (l *lineReader) warn(msg string, args ...any) {
	l.warned++
	if l.warned <= 10 {
		l.log.Warn(msg, args...)
	} else if l.warned == 11 {
		l.log.Warn("more stdout problems; not logging them any more")
	}
}

func preview(b []byte) string {
	if len(b) > 80 {
		b = b[:80]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// A JSON-RPC id: a number or a string.
const idPattern = `(-?[0-9]+|"(?:[^"\\]|\\.)*")`

var (
	// responseHead matches the start of a response, with its id when the
	// id comes first (as Go and Python servers write it).
	responseHead = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?(?:"id"\s*:\s*` + idPattern + `\s*,\s*)?(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(?:result|error)"\s*:`)
	})
	// responseTail matches the end of a response whose id comes last (as
	// the TypeScript SDK writes it: {"result":…,"jsonrpc":"2.0","id":3}).
	responseTail = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"id"\s*:\s*` + idPattern + `\s*\}\s*$`) })
)

// oversizeResponse returns an error response standing in for an oversized
// response, or nil if the line is not a response with a readable id.
func oversizeResponse(head, tail []byte, limit int) []byte {
	m := responseHead().FindSubmatch(head)
	if m == nil {
		return nil
	}
	id := m[1]
	if id == nil {
		if t := responseTail().FindSubmatch(tail); t != nil {
			id = t[1]
		}
	}
	if id == nil {
		return nil
	}
	msg := fmt.Sprintf("response larger than %d MiB discarded (the server's message exceeds switchboard's bound)", limit>>20)
	if limit < 1<<20 {
		msg = fmt.Sprintf("response larger than %d bytes discarded (the server's message exceeds switchboard's bound)", limit)
	}
	text, _ := json.Marshal(msg)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`+"\n", id, text)
}

package front

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// The fast lane's wire: what it reads of a request (scanCall, readBody,
// acceptsBoth) and how it writes an answer (laneWriter), as bytes, where
// go-sdk would decode and encode. The call between is the pipeline's
// (pipeline.go).

// A laneWriter writes the answer of a call on the fast lane: as one
// application/json response, or, once a notification for the client comes
// during the call (a log message), as an event stream that carries it and
// then the answer, as go-sdk does.
type laneWriter struct {
	w  http.ResponseWriter
	id []byte // the request's id, as written

	mu     sync.Mutex
	events bool // the response is an event stream
	done   bool // the answer is written: nothing more may be
}

// notify sends the client a notification during the call, and reports
// false when the call has been answered (the bridge sends it as after any
// call).
func (lw *laneWriter) notify(method string, params any) bool {
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return true // nothing to send
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.done {
		return false
	}
	lw.startEvents()
	lw.event(msg)
	return true
}

// abandon gives up the response for the usual path to write it, and
// reports whether it could: nothing has been written yet.
func (lw *laneWriter) abandon() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.events {
		return false
	}
	lw.done = true
	return true
}

// finish writes the answer, whose result is out.
func (lw *laneWriter) finish(out []byte) {
	b := make([]byte, 0, len(out)+len(lw.id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, lw.id...)
	b = append(b, `,"result":`...)
	b = append(b, out...)
	b = append(b, '}')
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.done = true
	if lw.events {
		lw.event(b)
		return
	}
	h := lw.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform")
	_, _ = lw.w.Write(b)
}

func (lw *laneWriter) startEvents() {
	if lw.events {
		return
	}
	lw.events = true
	h := lw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	lw.w.WriteHeader(http.StatusOK)
}

// event writes one event of the stream and flushes it.
func (lw *laneWriter) event(data []byte) {
	_, _ = lw.w.Write([]byte("event: message\ndata: "))
	_, _ = lw.w.Write(data)
	_, _ = lw.w.Write([]byte("\n\n"))
	if f, ok := lw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// fastCall is what the lane reads of a request.
type fastCall struct {
	id, args []byte // as written
	name     string
	cancels  []byte // for notifications/cancelled: the requestId, as written
}

// scanCall reads a body that is one tools/call request with params of a
// name and maybe arguments (an object), or one notifications/cancelled
// (cancels set). Anything else, or anything unusual (see jsonscan), is not
// ok.
func scanCall(body []byte) (c fastCall, ok bool) {
	var version, method, params []byte
	var seen int
	if !jsonscan.Members(body, func(key, v []byte) bool {
		seen++
		switch string(key) {
		case "jsonrpc":
			version = v
		case "id":
			c.id = v
		case "method":
			method = v
		case "params":
			params = v
		default:
			return false
		}
		return true
	}) || string(version) != `"2.0"` || params == nil || params[0] != '{' {
		return c, false
	}
	switch string(method) {
	case `"tools/call"`:
		if !plainID(c.id) || seen != 4 {
			return c, false
		}
		var pseen int
		ok = jsonscan.Members(params, func(key, v []byte) bool {
			pseen++
			switch string(key) {
			case "name":
				name, ok := jsonscan.PlainString(v)
				c.name = name
				return ok && name != ""
			case "arguments":
				c.args = v
				return v[0] == '{'
			}
			return false
		})
		return c, ok && c.name != "" && pseen == 1+btoi(c.args != nil)
	case `"notifications/cancelled"`:
		if c.id != nil {
			return c, false
		}
		jsonscan.Members(params, func(key, v []byte) bool {
			if string(key) == "requestId" && plainID(v) {
				c.cancels = v
			}
			return true
		})
		return c, c.cancels != nil
	}
	return c, false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// plainID reports an id written as a plain integer or a string of
// printable ASCII without escapes: one whose bytes are the id.
func plainID(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == '"' {
		_, ok := jsonscan.PlainString(v)
		return ok
	}
	d := v
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (len(d) > 1 && d[0] == '0') {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// readBody reads the body, at most limit bytes; over it, or on a read
// error, it puts back what it read so that go-sdk answers as it would.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if b, ok := bodyBytes(r); ok && int64(len(b)) <= limit {
		return b, nil // bodyGuard's, within the same limit
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || int64(len(b)) > limit {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		if err == nil {
			err = errors.New("over the limit")
		}
		return nil, err
	}
	return b, nil
}

// acceptsBoth reports whether the Accept header values take both JSON and
// an event stream, as go-sdk requires of a POST.
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

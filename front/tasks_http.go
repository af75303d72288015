package front

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// heldBody is a request body bodyGuard has read whole: the handlers after
// it read its bytes without a copy.
type heldBody struct {
	*bytes.Reader
	b []byte
}

func (heldBody) Close() error { return nil }

func holdBody(b []byte) io.ReadCloser { return heldBody{bytes.NewReader(b), b} }

// bodyBytes returns the request's body if bodyGuard holds it whole.
func bodyBytes(r *http.Request) ([]byte, bool) {
	hb, ok := r.Body.(heldBody)
	if !ok || hb.Len() != len(hb.b) { // read from already: not whole
		return nil, false
	}
	return hb.b, true
}

// taskHTTP is the tasks' door over Streamable HTTP (see Tasks in
// tasks.go): it answers the tasks' requests of a session itself, and adds
// the tasks capability and the tools' execution to go-sdk's answers to
// initialize and tools/list. Tasks are a session's: stateless serving has
// none. Over HTTP no status notifications are sent: clients poll
// tasks/get, as the protocol lets them.
func (s *Server) taskHTTP(next http.Handler, stateless bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodyBytes(r)
		// Every request of interest names "task…", "initialize" or
		// "tools/list"; most bodies are not looked at further.
		if r.Method != http.MethodPost || !ok || len(body) == 0 || body[0] != '{' ||
			!(bytes.Contains(body, []byte(`"task`)) || bytes.Contains(body, []byte(`"initialize"`)) || bytes.Contains(body, []byte(`"tools/list"`))) {
			next.ServeHTTP(w, r)
			return
		}
		m, ok := envelopeOf(body)
		if !ok || len(m.ID) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case stateless && (m.Method == "initialize" || m.Method == "tools/list"):
			next.ServeHTTP(w, r) // no sessions, no tasks: none are offered
		case m.Method == "initialize" || m.Method == "tools/list":
			rw := &rewriter{ResponseWriter: w, id: m.ID, method: m.Method}
			next.ServeHTTP(rw, r)
			rw.finish()
		case isTaskRequest(m.Method, m.Params):
			s.serveTaskHTTP(w, r, stateless, m.ID, m.Method, m.Params)
			if !stateless {
				s.keepAlive(next, r)
			}
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// keepAliveEvery is how often a session whose requests go to the tasks'
// door alone has one go through go-sdk: go-sdk ends a session idle for
// its SessionTimeout, counting only the requests it handles, and a client
// that polls a long task would otherwise lose its session under it.
const keepAliveEvery = time.Minute

// keepAlive hands go-sdk a ping of the request's session, at most once a
// keepAliveEvery, its answer discarded: go-sdk's idle timer starts again.
func (s *Server) keepAlive(next http.Handler, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return
	}
	now := time.Now()
	s.tasks.mu.Lock()
	if s.tasks.pinged == nil {
		s.tasks.pinged = map[string]time.Time{}
	}
	last, seen := s.tasks.pinged[sid]
	if seen && now.Sub(last) < keepAliveEvery {
		s.tasks.mu.Unlock()
		return
	}
	s.tasks.pinged[sid] = now
	for id, t := range s.tasks.pinged { // forget sessions long gone
		if now.Sub(t) > 2*sessionTimeout {
			delete(s.tasks.pinged, id)
		}
	}
	s.tasks.mu.Unlock()
	ping := r.Clone(r.Context())
	ping.Body = holdBody([]byte(`{"jsonrpc":"2.0","id":"switchboard-keepalive","method":"ping"}`))
	ping.ContentLength = -1
	next.ServeHTTP(discard{h: http.Header{}}, ping)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

// envelope is what the tasks' door reads of a request.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// envelopeOf reads a request's id, method and params, with a scan where
// it can (the body of a tool call whose arguments name a "task" key
// passes here: it is not decoded), else with the decoder.
func envelopeOf(body []byte) (envelope, bool) {
	var m envelope
	if jsonscan.Members(body, func(key, v []byte) bool {
		switch string(key) {
		case "id":
			m.ID = v
		case "method":
			method, plain := jsonscan.PlainString(v)
			m.Method = method
			return plain
		case "params":
			m.Params = v
		}
		return true
	}) {
		return m, true
	}
	m = envelope{}
	return m, json.Unmarshal(body, &m) == nil
}

// serveTaskHTTP answers a task request over HTTP.
func (s *Server) serveTaskHTTP(w http.ResponseWriter, r *http.Request, stateless bool, id json.RawMessage, method string, params json.RawMessage) {
	if stateless {
		writeRPCError(w, http.StatusOK, id, codeInvalidParams,
			"tasks need a session, and this gateway serves without sessions (serve --http --stateless): call the tool without a task")
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	var ss *mcp.ServerSession
	for cand := range s.mcp.Sessions() {
		if sid != "" && cand.ID() == sid && cand.InitializeParams() != nil {
			ss = cand
			break
		}
	}
	if ss == nil {
		writeRPCError(w, http.StatusNotFound, id, codeInvalidParams, "no such session: send initialize first, and its Mcp-Session-Id with each request")
		return
	}
	// Serving with identity, a session is its user's, its tasks too.
	if s.ident.Load() != nil && !s.sessionOfUser(ss, identity.From(r.Context())) {
		writeRPCError(w, http.StatusForbidden, id, codeInvalidParams, "this session is another user's")
		return
	}
	result, rerr := s.serveTask(r.Context(), ss, method, params, nil)
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	b, err := json.Marshal(resp)
	if err != nil {
		writeRPCError(w, http.StatusInternalServerError, id, codeInternal, "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// rewriter holds go-sdk's answer to initialize or tools/list, as JSON or
// as an event stream, and writes it with the tasks capability or the
// tools' execution added (withTaskCapability, withTaskExecution).
type rewriter struct {
	http.ResponseWriter
	id     json.RawMessage
	method string
	status int
	buf    bytes.Buffer
}

func (w *rewriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *rewriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(p)
}

// Flush holds what is written: the answer is written whole by finish.
func (w *rewriter) Flush() {}

func (w *rewriter) finish() {
	if w.status == 0 {
		return
	}
	out := w.buf.Bytes()
	if w.status == http.StatusOK {
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			out = w.events(out)
		} else if b, ok := w.rewrite(bytes.TrimSpace(out)); ok {
			out = append(b, '\n')
		}
	}
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(out)
}

// events rewrites the data line of the answer in an event stream. Lines
// end at '\n'; a stream that does not end with one gains it, as the
// client reads the last line the same way.
func (w *rewriter) events(stream []byte) []byte {
	out := make([]byte, 0, len(stream)+256)
	for rest := stream; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if b, ok := w.rewrite(data); ok {
				out = append(append(out, "data: "...), b...)
				out = append(out, '\n')
				continue
			}
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// rewrite rewrites msg if it is the answer to the request held.
func (w *rewriter) rewrite(msg []byte) ([]byte, bool) {
	dm, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, false
	}
	resp, ok := dm.(*jsonrpc.Response)
	if !ok || resp.Error != nil || resp.Result == nil || idKey(resp.ID) != rawIDKey(w.id) {
		return nil, false
	}
	var result json.RawMessage
	if w.method == "initialize" {
		result, ok = withTaskCapability(resp.Result)
	} else {
		result, ok = withTaskExecution(resp.Result)
	}
	if !ok {
		return nil, false
	}
	resp.Result = result
	b, err := jsonrpc.EncodeMessage(resp)
	return b, err == nil
}

// rawIDKey is idKey of an id as the request wrote it.
func rawIDKey(raw json.RawMessage) string {
	id, err := jsonrpc.MakeID(rawID(raw))
	if err != nil {
		return strconv.Quote(string(raw))
	}
	return idKey(id)
}

package front

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// The edge of the HTTP server: what every request meets before anything
// reads its body. A client that has not shown the token, or that names
// another host or origin, is answered and its connection closed, its body
// unread; a body is read within a deadline and within its bound, and a
// message the session cannot take (too deep, not JSON) is refused alone,
// with a JSON-RPC error that says why, before go-sdk or the fast lane sees
// it (docs/serve.md, Limits).

// Defaults of HTTPOptions' timeouts.
const (
	DefaultBodyTimeout = 30 * time.Second
	DefaultIdleTimeout = 2 * time.Minute
)

// headerTimeout bounds the reading of a request's headers (Serve).
const headerTimeout = 10 * time.Second

// deadlines bounds the reading of every request's body to timeout from when
// its headers have arrived: a client that sends its body slowly, or not at
// all, holds its connection that long, whatever handler it reaches. net/http
// lifts the deadline once the body has been read to its end, so a response
// may last as long as it must (an event stream does). A request without a
// body gets no deadline: a GET's event stream stays open.
func deadlines(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && timeout > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request that is refused before its body is read, and
// closes its connection (closeUnread).
func refuse(w http.ResponseWriter, code int, msg string) {
	closeUnread(w)
	http.Error(w, msg, code)
}

// closeUnread makes the connection of a request whose body is left unread
// close once it is answered, at once: net/http would otherwise read up to
// 256 KiB of what is left of the body, at the client's pace, to keep the
// connection for another request ("Connection: close" alone does not stop
// that read; a read deadline already passed does).
func closeUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// guarded wraps a route with the checks every route but /healthz has, in
// the order they cost the client nothing to fail: a loopback Host on a
// loopback listener (DNS rebinding), a same-site or trusted Origin, and the
// bearer token when token is set.
func guarded(token string, cop *http.CrossOriginProtection, trusted []string, next http.Handler) http.Handler {
	return loopbackHost(originCheck(trusted, crossOrigin(cop, bearer(token, next))))
}

// crossOrigin applies net/http's cross-origin protection (Sec-Fetch-Site
// and Origin of unsafe methods), closing the connection of a request it
// refuses.
func crossOrigin(cop *http.CrossOriginProtection, next http.Handler) http.Handler {
	if cop == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(r); err != nil {
			refuse(w, http.StatusForbidden, err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyGuard reads a POST's body, the JSON-RPC message(s) for /mcp, before
// anything else does, and passes it on whole: a declared length over limit
// is refused at once (413), without reading; a body that runs over limit
// as it comes (413) or that does not arrive within the deadline (408) is
// refused and its connection closed; a message nested deeper than go-sdk
// decodes, or that is not JSON, is refused (400) with a JSON-RPC error
// for its id that says why, and the session goes on. Past it, go-sdk's
// own refusals of a message (400, in plain text, which go-sdk's client
// takes as a broken connection) are given as JSON-RPC errors too.
func bodyGuard(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			closeUnread(w)
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalid,
				fmt.Sprintf("switchboard refused this request: its body of %d bytes is over the limit of %d; nothing was done for it", r.ContentLength, limit))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			closeUnread(w)
			code, why := http.StatusBadRequest, "reading the request body: "+err.Error()
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				code, why = http.StatusRequestTimeout, "the request body did not arrive in time"
			}
			writeRPCError(w, code, nil, codeInvalid, "switchboard refused this request: "+why+"; nothing was done for it")
			return
		}
		if int64(len(body)) > limit {
			closeUnread(w)
			id, kind := jsonscan.Envelope(body)
			writeRPCError(w, http.StatusRequestEntityTooLarge, requestID(id, kind), codeInvalid,
				fmt.Sprintf("switchboard refused this request: its body is over the limit of %d bytes; nothing was done for it", limit))
			return
		}
		if code, reason := checkBody(body); reason != "" {
			id, kind := jsonscan.Envelope(body)
			writeRPCError(w, http.StatusBadRequest, requestID(id, kind), code, "switchboard refused this request: "+reason+"; nothing was done for it")
			return
		}
		r.Body = holdBody(body)
		r.ContentLength = int64(len(body))
		rw := &rpcErrorWriter{ResponseWriter: w, body: body}
		next.ServeHTTP(rw, r)
		rw.finish()
	})
}

// checkBody returns why a body cannot be taken as JSON-RPC, or "".
// Messages that are JSON but not JSON-RPC are go-sdk's to judge
// (rpcErrorWriter): deciding that here would decode every request once
// more.
func checkBody(body []byte) (code int, reason string) {
	switch {
	case jsonscan.Deeper(body, jsonscan.MaxDepth):
		return codeInvalid, fmt.Sprintf("the message nests deeper than %d levels", jsonscan.MaxDepth)
	case !json.Valid(body):
		return codeParse, "the message is not valid JSON"
	}
	return 0, ""
}

// requestID is the id of a request, to answer it, or nil.
func requestID(id []byte, kind jsonscan.Kind) []byte {
	if kind != jsonscan.Request {
		return nil
	}
	return id
}

// writeRPCError answers with a JSON-RPC error response for id (null when
// it is not known), with HTTP status code, as the Streamable HTTP
// transport allows an error to be answered. go-sdk's client takes a
// refusal with an id as that request's error, keeping its session.
func writeRPCError(w http.ResponseWriter, status int, id []byte, code int, message string) {
	if id == nil {
		id = []byte("null")
	}
	text, _ := json.Marshal(message)
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, text)
	if id[0] != 'n' {
		if _, err := jsonrpc.DecodeMessage(body); err != nil {
			body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%s}}`, code, text)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// rpcErrorWriter turns go-sdk's plain-text 400 for a POST (a message it
// does not take: not JSON-RPC, a batch at a version without them, a bad
// header) into a JSON-RPC error for the request's id, saying the same.
type rpcErrorWriter struct {
	http.ResponseWriter
	body []byte // the request's

	held  bool         // a 400 in plain text is being held, to be rewritten
	text  bytes.Buffer // its body
	wrote bool         // the header has been written, or passed on
}

func (w *rpcErrorWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code == http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrorWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		if w.text.Len() < 4<<10 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// finish writes the JSON-RPC error for a held 400.
func (w *rpcErrorWriter) finish() {
	if !w.held {
		return
	}
	w.held = false
	w.Header().Del("X-Content-Type-Options")
	id, kind := jsonscan.Envelope(w.body)
	writeRPCError(w.ResponseWriter, http.StatusBadRequest, requestID(id, kind), codeInvalid,
		"switchboard refused this request: "+strings.TrimSpace(w.text.String()))
}

// Flush flushes what is written, for the fast lane's event streams.
func (w *rpcErrorWriter) Flush() {
	if !w.held {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// Secret values and where they are replaced (Options.Redact): the
// scrubber of errors (session.go), the stderr copier (stdio.go), the
// pool's logger (pool.go), the raw results of the fast path (fast.go), and,
// here, the bearer tokens a connection sends and what servers send: their
// requests and notifications, and their results.

// A bearerNoter notes the bearer token of each request it sends: an OAuth
// token, which the pool never resolves itself (go-sdk's OAuth handler, or
// the SSE transport's, sets it), is a secret like a configured header.
type bearerNoter struct {
	base http.RoundTripper
	set  *redact.Set
}

func (b bearerNoter) RoundTrip(req *http.Request) (*http.Response, error) {
	if v := req.Header.Get("Authorization"); v != "" {
		b.set.Add(v)
		if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
			b.set.Add(tok)
		}
	}
	return b.base.RoundTrip(req)
}

// redactReceived is receiving middleware that replaces the pool's secret
// values in what a server sends the client (log messages, elicitation and
// sampling requests, …), before anything passes it on or prints it.
func redactReceived(set *redact.Set) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p := req.GetParams(); p != nil && !set.Empty() {
				redactInPlace(set, p)
			}
			return next(ctx, method, req)
		}
	}
}

// redactResults is sending middleware that replaces the pool's secret
// values in the results servers send (a tool's, a resource's, a listing's
// descriptions): a server that echoes its own key hands it to no one.
func redactResults(set *redact.Set) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if res != nil && err == nil && !set.Empty() {
				res = redactCopy(set, res)
			}
			return res, err
		}
	}
}

// redactCopy returns v, a pointer to a value decoded from JSON, or a new
// value of its type with the secret values in its JSON replaced: v itself
// when it holds none, or when it cannot be decoded again.
func redactCopy[T any](set *redact.Set, v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	clean := set.Bytes(b)
	if string(clean) == string(b) {
		return v
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return v
	}
	fresh := reflect.New(rv.Elem().Type())
	if json.Unmarshal(clean, fresh.Interface()) != nil {
		return v
	}
	out, ok := fresh.Interface().(T)
	if !ok {
		return v
	}
	return out
}

// redactInPlace replaces the secret values in p, a pointer to a value
// decoded from JSON.
func redactInPlace(set *redact.Set, p any) {
	cp := redactCopy(set, p)
	if cp == p {
		return
	}
	dst, src := reflect.ValueOf(p), reflect.ValueOf(cp)
	if dst.Kind() == reflect.Pointer && src.Kind() == reflect.Pointer && dst.Type() == src.Type() {
		dst.Elem().Set(src.Elem())
	}
}

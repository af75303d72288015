package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A gateway shares one connection per server among its clients, so it must
// tell which server a request toward a client (sampling, elicitation) or a
// notification (a log message, progress) came from, and which of its
// callers' operations reached that server: ServerOf answers the first,
// OnReach the second. Together they let it pass what a server sends only
// to the client whose call to that server is in flight (package front).

type serverKey struct{}

// ServerOf returns the name of the server whose connection a request or
// notification came in on, as the handlers of Options.Client and the
// middleware of Options.ClientMiddleware see it in their context; "" when
// ctx is not such a handler's. A 2026-07-28 server's input request, which
// go-sdk fulfils within the call it answers, is handled in the call's own
// context, which names the server too.
func ServerOf(ctx context.Context) string {
	name, _ := ctx.Value(serverKey{}).(string)
	return name
}

func withServer(ctx context.Context, name string) context.Context {
	if ServerOf(ctx) == name {
		return ctx
	}
	return context.WithValue(ctx, serverKey{}, name)
}

// originMiddleware is the receiving middleware, first of all, that names
// the server in the context of everything its connection delivers, and
// the user whose own connection it is, if any (ConnUser).
func originMiddleware(name, user string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(withConnUser(withServer(ctx, name), user), method, req)
		}
	}
}

type reachKey struct{}

// OnReach returns ctx for operations made on one caller's behalf: each
// operation of a Pool made with it calls reach with the server's name
// before it reaches the server (before it connects, which may ask for a
// login, and before it sends anything). reach must be quick and must not
// call the pool.
//
// Such an operation also returns only once the notifications the server
// sent before its answer have been handled (by Options.Client's handlers),
// over every transport (see settle.go): what the server sent during the
// call is heard while the call is still the caller's. Those handlers must not wait for the operation.
func OnReach(ctx context.Context, reach func(server string)) context.Context {
	return context.WithValue(ctx, reachKey{}, reach)
}

// onReach reports whether ctx was made by OnReach.
func onReach(ctx context.Context) bool {
	_, ok := ctx.Value(reachKey{}).(func(string))
	return ok
}

// reached tells ctx's OnReach function, if any, that an operation is about
// to reach server name, and returns the context to make it in, which
// names the server (ServerOf).
func reached(ctx context.Context, name string) context.Context {
	if reach, ok := ctx.Value(reachKey{}).(func(string)); ok && reach != nil {
		reach(name)
	}
	return withServer(ctx, name)
}

package front

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// Replicas behind one load balancer: stateless requests reach any of
// them, stateful sessions are routed by their Mcp-Session-Id header, and
// the continuation of a multi round-trip call suspended on one replica is
// forwarded to it by whichever replica it reaches (docs/serve.md,
// Replicas).

// Registry says where the replicas that share a store are. A replica
// registers itself (internal/replicas does, in PostgreSQL); the front only
// looks others up.
type Registry interface {
	// Lookup returns the URL replica id advertises (scheme://host:port), and
	// false when no running replica has that id.
	Lookup(ctx context.Context, id string) (url string, ok bool, err error)
}

// ForwardedHeader marks a request one replica forwarded to another, with
// the forwarding replica's id. A replica never forwards such a request
// again.
const ForwardedHeader = "Switchboard-Forwarded-By"

// NewReplicaID returns a random replica id.
func NewReplicaID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "r" + hex.EncodeToString(b[:])
}

// CheckReplicaID checks that id may name a replica: 1 to 63 letters,
// digits, '-' and '_' (it is part of each requestState).
func CheckReplicaID(id string) error {
	ok := id != "" && len(id) <= 63
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("replica id %q: want 1 to 63 letters, digits, '-' or '_'", id)
	}
	return nil
}

// ReplicaID returns the server's replica id (Options.ReplicaID).
func (s *Server) ReplicaID() string { return s.opts.ReplicaID }

// forwarder sends the continuation of a call suspended on another replica
// to that replica, unchanged (body and headers, Authorization included:
// the owner checks the token as usual), and relays its answer. It forwards
// only to a replica the registry names.
type forwarder struct {
	self  string
	reg   Registry
	proxy *httputil.ReverseProxy
}

type ownerKey struct{}

// ownerURL is where a forwarded request goes, in its context.
type ownerURL struct {
	id  string
	url *url.URL
}

func newForwarder(self string, reg Registry) *forwarder {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 3 * time.Second}).DialContext
	f := &forwarder{self: self, reg: reg}
	f.proxy = &httputil.ReverseProxy{
		Transport:     tr,
		FlushInterval: -1, // answers may be event streams
		Rewrite: func(pr *httputil.ProxyRequest) {
			o := pr.In.Context().Value(ownerKey{}).(ownerURL)
			pr.Out.URL.Scheme, pr.Out.URL.Host = o.url.Scheme, o.url.Host
			pr.Out.Host = pr.In.Host // the owner checks Origin against it
			pr.Out.Header.Set(ForwardedHeader, self)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			o := r.Context().Value(ownerKey{}).(ownerURL)
			id, _ := r.Context().Value(rpcIDKey{}).(json.RawMessage)
			writeToolError(w, id, ownerGone(o.id, fmt.Sprintf("it advertised %s, which did not answer: %v", o.url.Host, err)))
		},
	}
	return f
}

type rpcIDKey struct{}

// ownerGone is the error for a continuation whose owner is gone.
func ownerGone(owner, why string) string {
	return fmt.Sprintf("switchboard: the call this answers was suspended on replica %s, which is no longer running (%s); nothing was sent to the server twice; call the tool again", owner, why)
}

// forward forwards r if it continues a call suspended on another replica,
// and reports whether it did (or answered with an error instead).
func (f *forwarder) forward(w http.ResponseWriter, r *http.Request, body []byte, m *rpcMessage) bool {
	if m.Method != "tools/call" || m.Params.RequestState == "" || r.Header.Get(ForwardedHeader) != "" {
		return false
	}
	owner, ok := stateOwner(m.Params.RequestState)
	if !ok || owner == f.self {
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	addr, found, err := f.reg.Lookup(ctx, owner)
	cancel()
	switch {
	case err != nil:
		writeToolError(w, m.ID, fmt.Sprintf("switchboard: the call this answers was suspended on replica %s, and the replica registry could not be read to reach it: %v; nothing was sent to the server; try again", owner, err))
		return true
	case !found:
		writeToolError(w, m.ID, ownerGone(owner, "it is not registered"))
		return true
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		writeToolError(w, m.ID, ownerGone(owner, fmt.Sprintf("it registered %q, which is not a URL", addr)))
		return true
	}
	ctx = context.WithValue(r.Context(), ownerKey{}, ownerURL{id: owner, url: u})
	ctx = context.WithValue(ctx, rpcIDKey{}, m.ID)
	f.proxy.ServeHTTP(w, r.WithContext(ctx))
	return true
}

// writeToolError answers a tools/call with an error result.
func writeToolError(w http.ResponseWriter, id json.RawMessage, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError"`
	}{[]content{{"text", msg}}, true}}
	data, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// sessionGone rewrites go-sdk's 404 for a request naming a session this
// replica does not hold ("session not found") into one that says why
// that may be and what to do.
func sessionGone(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&goneWriter{ResponseWriter: w}, r)
	})
}

// goneMessage is the body of a 404 for an unknown session.
const goneMessage = "switchboard: the session this request names (its Mcp-Session-Id) is not on this replica: it lives on another replica, or it has ended (the replica restarted, or the session was idle 30 minutes). Behind a load balancer, route requests by the Mcp-Session-Id header (docs/serve.md, Replicas); otherwise start a new session (initialize again)\n"

type goneWriter struct {
	http.ResponseWriter
	replaced bool
}

func (w *goneWriter) WriteHeader(code int) {
	if code == http.StatusNotFound && !w.replaced && w.Header().Get("Content-Type") == "text/plain; charset=utf-8" {
		w.replaced = true
		w.ResponseWriter.WriteHeader(code)
		_, _ = w.ResponseWriter.Write([]byte(goneMessage))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *goneWriter) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *goneWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

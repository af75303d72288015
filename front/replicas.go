package front

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
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

// ForwardAuthHeader carries, in a request one replica forwarded to
// another, the forwarding replica's signature in place of the client's
// credentials, which are never forwarded: the registry says where a
// replica is, and a record in it (or the database) may be forged, so
// whatever the registry names gets no token that works anywhere else. The
// value is "UNIXTIME.BODYSHA256.MAC", the MAC made with a key derived from
// HTTPOptions.StoreKey over the two replicas' ids, the time and the body's
// hash; the receiving replica checks all four, and the time within
// forwardSkew of its own clock.
const ForwardAuthHeader = "Switchboard-Forward-Auth"

// ForwardedUserHeader carries, in a request one replica forwarded to
// another, the signed-in user the forwarding replica checked the token of
// (settings.identity): the user's JSON, base64url. The signature covers
// it, so only a replica holding the store's key can name a user; the
// owner runs the request as that user, as the token it never sees would
// have it.
const ForwardedUserHeader = "Switchboard-Forwarded-User"

// forwardKeyPurpose names the key of ForwardAuthHeader among those
// derived from the store's key.
const forwardKeyPurpose = "forwarded requests"

// forwardSkew bounds how old (or how far ahead) a forwarded request's
// signature may be: replicas' clocks agree to well within it.
const forwardSkew = time.Minute

// signForward returns ForwardAuthHeader's value for a request from replica
// from to replica to, with body and ForwardedUserHeader's value user ("" for
// none), at now.
func signForward(key []byte, from, to string, now time.Time, body []byte, user string) string {
	sum := sha256.Sum256(body)
	ts, hx := strconv.FormatInt(now.Unix(), 10), hex.EncodeToString(sum[:])
	return ts + "." + hx + "." + pgstore.MAC(key, "forward", from, to, ts, hx, user)
}

// verifyForward checks ForwardAuthHeader's value sig for a request from
// replica from to replica to, naming user, at now, and returns the hash its
// body must have.
func verifyForward(key []byte, from, to, sig, user string, now time.Time) ([]byte, bool) {
	ts, rest, ok := strings.Cut(sig, ".")
	hx, mac, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || from == "" || !pgstore.ValidMAC(key, mac, "forward", from, to, ts, hx, user) {
		return nil, false
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, false
	}
	if d := now.Sub(time.Unix(unix, 0)); d > forwardSkew || d < -forwardSkew {
		return nil, false
	}
	sum, err := hex.DecodeString(hx)
	if err != nil || len(sum) != sha256.Size {
		return nil, false
	}
	return sum, true
}

// acceptForwarded passes a request another replica forwarded, signed
// (ForwardAuthHeader), to next without the bearer token, as the user it
// names (ForwardedUserHeader), and any other request to authed (the bearer
// check, then next). A forwarded request whose signature does not verify
// is refused with 401 and its connection closed, before its body is read;
// its body is checked against the signed hash as it is read, and a body
// that differs fails the read.
func acceptForwarded(self string, key []byte, authed, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig := r.Header.Get(ForwardAuthHeader)
		if sig == "" || len(key) == 0 {
			authed.ServeHTTP(w, r)
			return
		}
		user := r.Header.Get(ForwardedUserHeader)
		sum, ok := verifyForward(key, r.Header.Get(ForwardedHeader), self, sig, user, time.Now())
		if !ok {
			refuse(w, http.StatusUnauthorized, "switchboard: a forwarded request whose signature does not verify (replicas must share settings.store.key, and their clocks must agree within a minute)")
			return
		}
		if user != "" {
			u, err := decodeForwardedUser(user)
			if err != nil {
				refuse(w, http.StatusUnauthorized, "switchboard: a forwarded request whose user does not decode: "+err.Error())
				return
			}
			r = r.WithContext(identity.With(r.Context(), u))
		}
		r.Body = &signedBody{ReadCloser: r.Body, want: sum, h: sha256.New()}
		next.ServeHTTP(w, r)
	})
}

// encodeForwardedUser returns ForwardedUserHeader's value for u, "" for
// none.
func encodeForwardedUser(u *identity.User) string {
	if u == nil {
		return ""
	}
	data, _ := json.Marshal(u)
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeForwardedUser(v string) (*identity.User, error) {
	data, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, err
	}
	var u identity.User
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, err
	}
	if u.Subject == "" {
		return nil, errors.New("it names no subject")
	}
	return &u, nil
}

// errForwardBody is the read error of a forwarded body that is not the
// one its signature names.
var errForwardBody = errors.New("the forwarded request's body is not the one its signature names")

// signedBody checks a forwarded request's body against its signed hash as
// it is read: the read that ends it fails if they differ.
type signedBody struct {
	io.ReadCloser
	want []byte
	h    hash.Hash
	bad  bool
}

func (b *signedBody) Read(p []byte) (int, error) {
	if b.bad {
		return 0, errForwardBody
	}
	n, err := b.ReadCloser.Read(p)
	b.h.Write(p[:n])
	if err == io.EOF && !bytes.Equal(b.h.Sum(nil), b.want) {
		b.bad = true
		return n, errForwardBody
	}
	return n, err
}

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
// to that replica, and relays its answer. The body goes unchanged; the
// client's credentials (Authorization, Cookie) do not: the request is
// signed with the forward key instead (ForwardAuthHeader), which the owner
// checks in place of the token. It forwards only to a replica the
// registry names, with a record signed with the store's key.
type forwarder struct {
	self  string
	key   []byte
	reg   Registry
	proxy *httputil.ReverseProxy
}

type ownerKey struct{}

// ownerURL is where a forwarded request goes, in its context.
type ownerURL struct {
	id   string
	url  *url.URL
	sig  string // ForwardAuthHeader's value
	user string // ForwardedUserHeader's value; "" for none
}

func newForwarder(self string, key []byte, reg Registry) *forwarder {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 3 * time.Second}).DialContext
	f := &forwarder{self: self, key: key, reg: reg}
	f.proxy = &httputil.ReverseProxy{
		Transport:     tr,
		FlushInterval: -1, // answers may be event streams
		Rewrite: func(pr *httputil.ProxyRequest) {
			o := pr.In.Context().Value(ownerKey{}).(ownerURL)
			pr.Out.URL.Scheme, pr.Out.URL.Host = o.url.Scheme, o.url.Host
			pr.Out.Host = pr.In.Host // the owner checks Origin against it
			for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
				pr.Out.Header.Del(h)
			}
			pr.Out.Header.Set(ForwardedHeader, self)
			pr.Out.Header.Set(ForwardAuthHeader, o.sig)
			pr.Out.Header.Del(ForwardedUserHeader) // the client's, if it sent one: never passed on
			if o.user != "" {
				pr.Out.Header.Set(ForwardedUserHeader, o.user)
			}
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
	user := encodeForwardedUser(identity.From(r.Context()))
	ctx = context.WithValue(r.Context(), ownerKey{}, ownerURL{id: owner, url: u, user: user, sig: signForward(f.key, f.self, owner, time.Now(), body, user)})
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

package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A replica that is told to stop (SIGTERM in a rolling update) drains: it
// turns /readyz to 503 at once, so the load balancer sends it nothing new,
// refuses each new request before doing anything for it (503, Connection:
// close, so that it can be sent again elsewhere: nothing is half served),
// and lets the calls in flight finish, suspended multi round-trip calls
// among them, whose continuations it still takes. Calls still running at
// the bound are cancelled: the upstream server is sent
// notifications/cancelled and the client an error that names the shutdown.

// ErrShuttingDown is the cause of the calls a drain cancels at its bound.
var ErrShuttingDown = errors.New("switchboard is shutting down")

// drainState is a Server's part in draining. The zero value takes
// requests.
type drainState struct {
	draining atomic.Bool
	active   atomic.Int64  // /mcp POST requests being served
	kick     chan struct{} // signalled, while draining, when a request or a suspended call ends

	halt     context.Context // cancelled, with the shutdown's error as cause, at the drain's bound
	haltCall context.CancelCauseFunc
}

func (d *drainState) init() {
	d.kick = make(chan struct{}, 1)
	d.halt, d.haltCall = context.WithCancelCause(context.Background())
}

// changed wakes a drain waiting for the calls in flight.
func (d *drainState) changed() {
	if d.draining.Load() {
		select {
		case d.kick <- struct{}{}:
		default:
		}
	}
}

// Draining reports whether the server is draining: it takes no new
// requests.
func (s *Server) Draining() bool { return s.drain.draining.Load() }

// busy returns how many requests are being served and how many multi
// round-trip calls are suspended, waiting for their client.
func (s *Server) busy() (requests, suspended int) {
	s.bridge.mu.Lock()
	suspended = len(s.bridge.suspended)
	s.bridge.mu.Unlock()
	return int(s.drain.active.Load()), suspended
}

// Drain stops taking new requests and waits for the calls in flight to
// end, up to bound; past it, it cancels what is left with
// ErrShuttingDown and waits (up to 5 seconds) for their answers to be
// written. It returns how many requests and suspended calls it cancelled.
// Close the server afterwards.
func (s *Server) Drain(bound time.Duration) (cancelled int) {
	s.drain.draining.Store(true)
	s.log.Info("draining: taking no new requests", "bound", bound)
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		req, susp := s.busy()
		if req+susp == 0 {
			return 0
		}
		select {
		case <-s.drain.kick:
			continue
		case <-deadline.C:
		}
		s.log.Warn("draining: cancelling the calls still in flight", "requests", req, "suspended", susp, "bound", bound)
		s.drain.haltCall(fmt.Errorf("%w, and the call did not finish within the %v it was given to (the server was sent notifications/cancelled); call the tool again", ErrShuttingDown, bound))
		s.bridge.abandonAll()
		last := time.NewTimer(5 * time.Second)
		defer last.Stop()
		for {
			if r, _ := s.busy(); r == 0 {
				return req + susp
			}
			select {
			case <-s.drain.kick:
			case <-last.C:
				return req + susp
			}
		}
	}
}

// haltable is receiving middleware: a tool call still running when a
// drain runs out is cancelled, and answered with an error that says so.
// Other requests are short; the sessions' end cuts any left. (It costs a
// tool call 7 allocations, ~600 bytes: BenchmarkInProcess.)
func (s *Server) haltable(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(s.drain.halt, cancel)
		res, err := next(ctx, method, req)
		stop()
		cancel()
		if err := s.halted(ctx); err != nil {
			return errorResult(err), nil
		}
		return res, err
	}
}

// halted returns the error a tool call answers with when a drain cut it
// at its bound (ctx, the call's, ended after the drain's), else nil.
func (s *Server) halted(ctx context.Context) error {
	if cause := context.Cause(s.drain.halt); cause != nil && ctx.Err() != nil {
		return fmt.Errorf("switchboard: the call was cancelled: %w", cause)
	}
	return nil
}

// rpcMessage is what the front reads of a JSON-RPC message before go-sdk
// does: whether it is a call, and a tool call's requestState.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestState string `json:"requestState"`
	} `json:"params"`
}

// isCall reports a request that expects an answer (not a notification, nor
// a client's answer to the server).
func (m *rpcMessage) isCall() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// peek reads the body of r (at most limit bytes) and puts it back, and
// decodes the JSON-RPC messages in it (one, or a batch). A body that does
// not decode gives no messages: go-sdk answers it.
func peek(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, []rpcMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	r.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	r.Body = holdBody(body)
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	var msgs []rpcMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		_ = json.Unmarshal(trimmed, &msgs)
	} else {
		var m rpcMessage
		if json.Unmarshal(trimmed, &m) == nil {
			msgs = []rpcMessage{m}
		}
	}
	return body, msgs, nil
}

// admit serves /mcp through next, counting the POST requests in flight for
// Drain. While draining it refuses every request that would start
// something new (initialize, a call that is not the continuation of a
// suspended one), before anything is done for it; notifications, a
// client's answers and continuations still pass, since they finish what is
// in flight. With a registry, a continuation of a call suspended on
// another replica is forwarded there (forwarder).
func (s *Server) admit(next http.Handler, fwd *forwarder, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			if s.drain.draining.Load() {
				w.Header().Set("Connection", "close")
			}
			next.ServeHTTP(w, r)
			return
		}
		s.drain.active.Add(1)
		defer func() {
			s.drain.active.Add(-1)
			s.drain.changed()
		}()
		draining := s.drain.draining.Load()
		if !draining && fwd == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, msgs, err := peek(w, r, limit)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if fwd != nil && len(msgs) == 1 && fwd.forward(w, r, body, &msgs[0]) {
			return
		}
		if draining {
			w.Header().Set("Connection", "close")
			for i := range msgs {
				if msgs[i].isCall() && (msgs[i].Method != "tools/call" || msgs[i].Params.RequestState == "") {
					w.Header().Set("Retry-After", "1")
					http.Error(w, "switchboard: this replica is shutting down and takes no new requests or sessions; nothing was done for this one: send it again (another replica takes it)", http.StatusServiceUnavailable)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// readyz answers whether the server takes requests: 503 while draining or
// when ready fails (given 2 seconds), else 200.
func (s *Server) readyz(ready func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if s.drain.draining.Load() {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "draining: shutting down, taking no new requests")
			return
		}
		if ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				// The error may name a database's host, user and name:
				// it goes to the log, not to whoever asks.
				s.log.Warn("not ready", "err", err)
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready: a service the gateway needs is unreachable (see its log)")
				return
			}
		}
		fmt.Fprintln(w, "ready")
	}
}

// Serve serves h, the server's handler, on ln until ctx is done, closing a
// connection idle for the IdleTimeout of the HTTPOptions that Handler was
// given last, and one whose headers take longer than 10 seconds; then it
// drains (Drain, up to drain), stops serving HTTP and closes the server,
// which ends its sessions and stops its upstream servers.
func (s *Server) Serve(ctx context.Context, ln net.Listener, h http.Handler, drain time.Duration) error {
	idle := time.Duration(s.idle.Load())
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	// The bodies' deadlines are the handler's (HTTPOptions.BodyTimeout):
	// a ReadTimeout here would bound them too, but not a handler's own.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: idle}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.SetKeepAlivesEnabled(false)
	began := time.Now()
	if n := s.Drain(drain); n > 0 {
		s.log.Warn("drained: cancelled what did not finish in time", "cancelled", n, "took", time.Since(began))
	} else {
		s.log.Info("drained: every call in flight finished", "took", time.Since(began))
	}
	closeErr := s.Close() // ends the sessions, and with them their streams
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return closeErr
}

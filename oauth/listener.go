package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// callbackPath is the path of the redirect URI on the loopback listener.
const callbackPath = "/callback"

// A listener receives the redirect of one login on 127.0.0.1 (RFC 8252
// section 7.3). It accepts exactly one request whose state is the login's,
// then answers every other request 410 Gone until it is closed; requests
// with another state, or none, are refused and do not end it.
type listener struct {
	ln  net.Listener
	srv *http.Server
	got chan url.Values // the matching redirect's parameters; buffered

	mu    sync.Mutex
	state string
	done  bool // the matching request came

	served chan struct{} // closed when Serve returns
}

func listen(port int) (*listener, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	l := &listener{ln: ln, got: make(chan url.Values, 1), served: make(chan struct{})}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	return l, nil
}

func (l *listener) redirectURI() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", l.ln.Addr().(*net.TCPAddr).Port, callbackPath)
}

// serve starts answering requests for the login whose state is state.
func (l *listener) serve(state string) {
	l.mu.Lock()
	l.state = state
	l.mu.Unlock()
	go func() { // owned by close, which waits for it
		defer close(l.served)
		if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path != callbackPath {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	l.mu.Lock()
	switch {
	case l.done:
		l.mu.Unlock()
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, page("This login is already complete.", "You can close this window."))
		return
	case l.state == "" || q.Get("state") != l.state:
		l.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, page("This is not the redirect Switchboard is waiting for.", "Its state does not match. Start the login again if this persists."))
		return
	}
	l.done = true
	l.mu.Unlock()
	// Answer the browser first: the login closes the listener as soon as
	// it has the redirect.
	if q.Get("error") != "" {
		fmt.Fprint(w, page("The login was refused.", "Switchboard shows why in the terminal. You can close this window."))
	} else {
		fmt.Fprint(w, page("Switchboard is logged in.", "You can close this window."))
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	l.got <- q
}

func page(title, body string) string {
	return "<!doctype html><title>Switchboard</title><h1>" + html.EscapeString(title) + "</h1><p>" + html.EscapeString(body) + "</p>\n"
}

// closeWait bounds how long close waits for a response under way.
const closeWait = 2 * time.Second

// close stops the listener, letting a response under way finish (within
// closeWait), and waits for it; it is idempotent.
func (l *listener) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if l.srv.Shutdown(ctx) != nil {
		_ = l.srv.Close()
	}
	_ = l.ln.Close()
	l.mu.Lock()
	started := l.state != ""
	l.mu.Unlock()
	if started {
		<-l.served
	}
}

package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// lockedBuffer is a log destination that goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authEngine returns an engine over one HTTP server "api" that needs an
// OAuth login, with a file credential store, logging everything to logs.
func authEngine(t *testing.T) (*Engine, *oauthtest.Server, *lockedBuffer) {
	t.Helper()
	as := oauthtest.New(t, oauthtest.Options{})
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := engineIn(t, t.TempDir(), map[string]def{"api": {"url": as.URL()}}, nil,
		&Options{Credentials: credstore.NewFile(t.TempDir()), Logger: log})
	return e, as, logs
}

// sessionDo runs a request in a session of its own.
func sessionDo(t *testing.T, s *Session, req string) *proxy.Result {
	t.Helper()
	return s.Handle(t.Context(), json.RawMessage(req))
}

// startAuth runs auth-start in s and returns its authorization URL.
func startAuth(t *testing.T, s *Session) string {
	t.Helper()
	r := sessionDo(t, s, `{"action":"auth-start","server":"api"}`)
	if r.IsError || r.Details.Auth == nil {
		t.Fatalf("auth-start: %s", r.Text)
	}
	a := r.Details.Auth
	wantText(t, r, a.AuthorizationURL, a.Callback, `{"action": "auth-complete", "server": "api", "args": {"redirectUrl": "THE URL"}}`)
	if a.ExpiresIn != int(loginTTL/time.Second) || !strings.HasPrefix(a.Callback, "http://127.0.0.1:") {
		t.Errorf("auth-start details = %+v", a)
	}
	return a.AuthorizationURL
}

// completeReq is an auth-complete request with args.
func completeReq(args map[string]string) string {
	b, _ := json.Marshal(map[string]any{"action": "auth-complete", "server": "api", "args": args})
	return string(b)
}

// TestAuthFlowPastedRedirect: a client that cannot open URLs logs in
// through the mcp tool: auth-start gives the URL; the user approves in a
// browser that cannot reach the loopback callback and pastes the redirect
// URL (or the code alone); auth-complete logs in and connects, and a call
// works. Neither the code nor the state is logged.
func TestAuthFlowPastedRedirect(t *testing.T) {
	for _, form := range []string{"redirectUrl", "code"} {
		t.Run(form, func(t *testing.T) {
			e, _, logs := authEngine(t)
			s := e.NewSession()
			r := sessionDo(t, s, `{"tool":"echo","server":"api","args":{"text":"hi"}}`)
			if !r.IsError {
				t.Fatalf("a call before the login worked: %s", r.Text)
			}
			authURL := startAuth(t, s)
			redirect, err := oauthtest.Approve(t.Context(), authURL)
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(redirect)
			code, state := u.Query().Get("code"), u.Query().Get("state")
			args := map[string]string{"redirectUrl": redirect}
			if form == "code" {
				args = map[string]string{"code": code}
			}
			r = sessionDo(t, s, completeReq(args))
			if r.IsError {
				t.Fatalf("auth-complete: %s", r.Text)
			}
			wantText(t, r, `logged in to "api" and connected (1 tool)`)
			wantText(t, sessionDo(t, s, `{"tool":"echo","server":"api","args":{"text":"after login"}}`), "after login")
			for _, secret := range []string{code, state, oauthtest.CanaryPrefix} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the logs hold %q:\n%s", secret, logs)
				}
				if strings.Contains(r.Text, secret) {
					t.Errorf("the answer holds %q:\n%s", secret, r.Text)
				}
			}
			if e.redact.String("x"+code+"x") == "x"+code+"x" || e.redact.String(state) == state {
				t.Errorf("the code or the state is not in the engine's redaction set")
			}
		})
	}
}

// TestAuthFlowRefusals: a redirect that is not the pending login's is
// refused and leaves the login waiting: another state, another host,
// port, path or scheme, and any redirect from another session. Then the
// right one completes it.
func TestAuthFlowRefusals(t *testing.T) {
	e, _, _ := authEngine(t)
	s := e.NewSession()
	authURL := startAuth(t, s)
	redirect, err := oauthtest.Approve(t.Context(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(redirect)
	with := func(f func(u *url.URL)) string {
		v := *u
		f(&v)
		return v.String()
	}
	foreign := []struct {
		name, redirect, want string
	}{
		{"state", with(func(v *url.URL) {
			q := v.Query()
			q.Set("state", "another-login-state-0123456789")
			v.RawQuery = q.Encode()
		}), "its state is not this login's"},
		{"no state", with(func(v *url.URL) {
			q := v.Query()
			q.Del("state")
			v.RawQuery = q.Encode()
		}), "its state is not this login's"},
		{"host", with(func(v *url.URL) { v.Host = "attacker.example:" + u.Port() }), "not this login's callback"},
		{"localhost", with(func(v *url.URL) { v.Host = "localhost:" + u.Port() }), "not this login's callback"},
		{"port", with(func(v *url.URL) { v.Host = "127.0.0.1:1" }), "not this login's callback"},
		{"path", with(func(v *url.URL) { v.Path = "/elsewhere" }), "not this login's callback"},
		{"scheme", with(func(v *url.URL) { v.Scheme = "https" }), "not this login's callback"},
		{"userinfo", with(func(v *url.URL) { v.User = url.User("x") }), "not this login's callback"},
	}
	for _, f := range foreign {
		r := sessionDo(t, s, completeReq(map[string]string{"redirectUrl": f.redirect}))
		if !r.IsError {
			t.Fatalf("%s: a foreign redirect was taken: %s", f.name, r.Text)
		}
		wantText(t, r, f.want, "the login still waits")
		if strings.Contains(r.Text, u.Query().Get("code")) {
			t.Errorf("%s: the refusal repeats the code: %s", f.name, r.Text)
		}
	}
	other := e.NewSession()
	r := sessionDo(t, other, completeReq(map[string]string{"redirectUrl": redirect}))
	if !r.IsError {
		t.Fatalf("another session completed the login: %s", r.Text)
	}
	wantText(t, r, "started by another session")
	wantText(t, sessionDo(t, s, completeReq(map[string]string{"redirectUrl": redirect})), `logged in to "api"`)
	r = sessionDo(t, s, completeReq(map[string]string{"redirectUrl": redirect}))
	wantText(t, r, "no login is pending")
}

// TestAuthFlowExpiry: a login not completed within loginTTL is refused
// and forgotten; auth-complete then says to start one. The engine's clock
// is moved, nothing sleeps.
func TestAuthFlowExpiry(t *testing.T) {
	e, _, _ := authEngine(t)
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	e.clock = func() time.Time { return time.Unix(0, now.Load()) }
	s := e.NewSession()
	authURL := startAuth(t, s)
	redirect, err := oauthtest.Approve(t.Context(), authURL)
	if err != nil {
		t.Fatal(err)
	}
	now.Add(int64(loginTTL + time.Second))
	r := sessionDo(t, s, completeReq(map[string]string{"redirectUrl": redirect}))
	if !r.IsError {
		t.Fatalf("an expired login completed: %s", r.Text)
	}
	wantText(t, r, fmt.Sprintf("the login expired (a login waits %s)", loginTTL), `{"action": "auth-start", "server": "api"}`)
	wantText(t, sessionDo(t, s, completeReq(map[string]string{"redirectUrl": redirect})), "no login is pending")
	if r := sessionDo(t, s, `{"tool":"echo","server":"api","args":{"text":"hi"}}`); !r.IsError {
		t.Errorf("a call after an expired login worked: %s", r.Text)
	}
}

// TestAuthFlowCallback: when the browser reaches the loopback callback,
// the login completes by itself; a call then works, and auth-complete
// says the server is logged in.
func TestAuthFlowCallback(t *testing.T) {
	e, _, _ := authEngine(t)
	s := e.NewSession()
	authURL := startAuth(t, s)
	e.logins.mu.Lock()
	p := e.logins.m["api"]
	e.logins.mu.Unlock()
	if code, err := oauthtest.Follow(t.Context(), authURL); err != nil || code != 200 {
		t.Fatalf("the browser got %d, %v", code, err)
	}
	<-p.done
	if p.err != nil {
		t.Fatal(p.err)
	}
	wantText(t, sessionDo(t, s, `{"tool":"echo","server":"api","args":{"text":"by itself"}}`), "by itself")
	wantText(t, sessionDo(t, s, completeReq(map[string]string{"code": "ignored"})), `logged in to "api"`)
}

// TestAuthFlowRestart: a second auth-start replaces the pending login:
// the first one's redirect is refused (its state is not the new login's).
func TestAuthFlowRestart(t *testing.T) {
	e, _, _ := authEngine(t)
	s := e.NewSession()
	first, err := oauthtest.Approve(t.Context(), startAuth(t, s))
	if err != nil {
		t.Fatal(err)
	}
	second, err := oauthtest.Approve(t.Context(), startAuth(t, s))
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, sessionDo(t, s, completeReq(map[string]string{"redirectUrl": first})), "its state is not this login's")
	wantText(t, sessionDo(t, s, completeReq(map[string]string{"redirectUrl": second})), `logged in to "api"`)
}

// TestAuthFlowRefusedServers: auth-complete without auth-start says to
// start one; auth-start and auth-complete of an unknown server get the
// usual error, with suggestions.
func TestAuthFlowRefusedServers(t *testing.T) {
	e, _, _ := authEngine(t)
	wantText(t, handle(t, e, completeReq(map[string]string{"code": "c"})), `no login is pending; start one with {"action": "auth-start", "server": "api"}`)
	wantText(t, handle(t, e, `{"action":"auth-start","server":"apu"}`), "did you mean: api")
	wantText(t, handle(t, e, `{"action":"auth-complete","server":"nope","args":{"code":"c"}}`), `unknown server "nope"`)
}

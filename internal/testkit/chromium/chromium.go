// Package chromium runs a real headless Chromium (Debian's package) for a
// test and drives it over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on the browser's fd 3, answers and
// events on its fd 4, each message ended by a NUL byte), so no debugging
// port is opened and no Go module beyond the standard library is needed.
//
// The browser runs with a temporary profile and may reach no host but
// 127.0.0.1: every other name fails to resolve (--host-resolver-rules), and
// its background services (updates, metrics, safe browsing) are off. It is
// closed, and its process group killed, when the test ends.
//
// Where Chromium is not installed, Start skips the test, or fails it when
// SWITCHBOARD_REQUIRE_BROWSER=1 (scripts/test.sh sets it and installs
// Chromium).
package chromium

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv names the variable that makes a missing Chromium a failure.
const RequireEnv = "SWITCHBOARD_REQUIRE_BROWSER"

// closeBound bounds how long Chromium may take to exit after Browser.close
// before its process group is killed.
const closeBound = 10 * time.Second

// Browser is a running headless Chromium.
type Browser struct {
	cmd  *exec.Cmd
	in   *os.File      // our end of the browser's fd 3: commands
	done chan struct{} // closed when cmd.Wait has returned
	log  *tail         // the browser's stdout and stderr, the end of it

	mu      sync.Mutex
	nextID  int64
	calls   map[int64]chan reply
	events  []Event
	changed chan struct{} // closed, and replaced, when an event arrives
	readErr error         // why the reading of answers stopped
}

// An Event is a DevTools protocol event, in the session it came from ("" for
// the browser's own).
type Event struct {
	Session string
	Method  string
	Params  json.RawMessage
}

type reply struct {
	result json.RawMessage
	err    error
}

// message is a DevTools protocol message, either way.
type message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"`
	} `json:"error,omitempty"`
}

// Path returns the Chromium executable ($SWITCHBOARD_CHROMIUM, else
// chromium on $PATH), or skips t (fails it under
// SWITCHBOARD_REQUIRE_BROWSER=1) when there is none.
func Path(t testing.TB) string {
	t.Helper()
	if !supported {
		t.Skip("chromium runs the browser on Linux only")
	}
	if p := os.Getenv("SWITCHBOARD_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		msg := fmt.Sprintf("chromium is not installed (%v): apt-get install --no-install-recommends chromium, or run scripts/test.sh as root", err)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s (%s=1)", msg, RequireEnv)
		}
		t.Skip(msg)
	}
	return p
}

// Start starts headless Chromium with a temporary profile. When the test
// ends the browser is closed (its process group killed if it does not exit
// within 10 seconds) and waited for; if the test failed, the end of its
// output is logged.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := Path(t)
	cmdIn, in, err := os.Pipe() // the browser reads commands from cmdIn, its fd 3
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	out, cmdOut, err := os.Pipe() // and writes answers to cmdOut, its fd 4
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	cmd := exec.Command(path, flags(t.TempDir())...)
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	cmd.SysProcAttr = groupAttr()
	b := &Browser{
		cmd:     cmd,
		in:      in,
		done:    make(chan struct{}),
		log:     &tail{max: 64 << 10},
		calls:   map[int64]chan reply{},
		changed: make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = b.log, b.log
	err = cmd.Start()
	cmdIn.Close()
	cmdOut.Close()
	if err != nil {
		in.Close()
		out.Close()
		t.Fatalf("starting chromium: %v", err)
	}
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		b.read(out)
	}()
	t.Cleanup(func() {
		b.close()
		<-read
		out.Close()
		if t.Failed() {
			t.Logf("chromium's console:\n%s\nchromium's output (the end):\n%s", strings.Join(b.Console(), "\n"), b.log.String())
		}
	})
	return b
}

// flags are Chromium's command line with its profile in dir.
func flags(dir string) []string {
	f := []string{
		"--headless",
		"--remote-debugging-pipe",
		"--user-data-dir=" + dir,
		"--no-first-run",
		"--no-default-browser-check",
		// Nothing but loopback: every other host name fails to resolve, and
		// the services that would call out on their own are off.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-domain-reliability",
		"--disable-client-side-phishing-detection",
		"--disable-sync",
		"--disable-breakpad",
		"--metrics-recording-only",
		"--no-pings",
		"--disable-gpu",
		"--disable-dev-shm-usage",
		"--mute-audio",
		"about:blank",
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox on.
		f = append([]string{"--no-sandbox"}, f...)
	}
	return f
}

// read decodes the browser's messages from r until it closes, handing
// answers to their callers and keeping events.
func (b *Browser) read(r *os.File) {
	br := bufio.NewReader(r)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if err = json.Unmarshal(line[:len(line)-1], &m); err != nil {
			err = fmt.Errorf("decoding a DevTools message: %w", err)
			break
		}
		b.dispatch(m)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.readErr = fmt.Errorf("chromium's DevTools pipe: %w", err)
	for id, c := range b.calls {
		c <- reply{err: b.readErr}
		delete(b.calls, id)
	}
	close(b.changed)
}

func (b *Browser) dispatch(m message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.ID == 0 {
		params, _ := json.Marshal(m.Params)
		b.events = append(b.events, Event{Session: m.SessionID, Method: m.Method, Params: params})
		close(b.changed)
		b.changed = make(chan struct{})
		return
	}
	c, ok := b.calls[m.ID]
	if !ok {
		return
	}
	delete(b.calls, m.ID)
	if m.Error != nil {
		c <- reply{err: fmt.Errorf("%s (%d) %s", m.Error.Message, m.Error.Code, m.Error.Data)}
		return
	}
	c <- reply{result: m.Result}
}

// Call sends a DevTools command in session ("" for the browser's own) and
// decodes its result into result, if not nil.
func (b *Browser) Call(ctx context.Context, session, method string, params, result any) error {
	c := make(chan reply, 1)
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, b.readErr)
	}
	b.nextID++
	id := b.nextID
	b.calls[id] = c
	b.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	data, err := json.Marshal(message{ID: id, SessionID: session, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: sending to chromium: %w", method, err)
	}
	select {
	case r := <-c:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("%s: decoding its result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.calls, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// WaitEvent returns the params of the first event of method in session
// (since the browser started) for which match, if not nil, is true,
// waiting for one to come.
func (b *Browser) WaitEvent(ctx context.Context, session, method string, match func(json.RawMessage) bool) (json.RawMessage, error) {
	seen := 0
	for {
		b.mu.Lock()
		events, changed, readErr := b.events[seen:], b.changed, b.readErr
		seen = len(b.events)
		b.mu.Unlock()
		for _, e := range events {
			if e.Session == session && e.Method == method && (match == nil || match(e.Params)) {
				return e.Params, nil
			}
		}
		if readErr != nil {
			return nil, fmt.Errorf("waiting for %s: %w", method, readErr)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// close asks the browser to close, and kills its process group if it has
// not exited within closeBound; then waits for it.
func (b *Browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeBound)
	defer cancel()
	_ = b.Call(ctx, "", "Browser.close", nil, nil)
	select {
	case <-b.done:
	case <-ctx.Done():
	}
	killGroup(b.cmd)
	<-b.done
	b.in.Close()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Console returns what the pages' scripts logged and threw, and the
// browser's own log entries (a module that failed to load, a refused
// request), one line each, in order.
func (b *Browser) Console() []string {
	b.mu.Lock()
	events := b.events
	b.mu.Unlock()
	var lines []string
	for _, e := range events {
		var line string
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string
				Args []struct {
					Value       any
					Description string
				}
			}
			_ = json.Unmarshal(e.Params, &p)
			line = p.Type + ":"
			for _, a := range p.Args {
				if a.Value != nil {
					line += fmt.Sprintf(" %v", a.Value)
				} else {
					line += " " + a.Description
				}
			}
		case "Runtime.exceptionThrown":
			var p struct {
				ExceptionDetails struct {
					Text      string
					URL       string
					Exception struct{ Description string }
				}
			}
			_ = json.Unmarshal(e.Params, &p)
			d := p.ExceptionDetails
			line = fmt.Sprintf("exception: %s %s %s", d.Text, d.Exception.Description, d.URL)
		case "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Text, URL string }
			}
			_ = json.Unmarshal(e.Params, &p)
			line = fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL)
		default:
			continue
		}
		if len(line) > 500 {
			line = line[:500] + "..."
		}
		lines = append(lines, fmt.Sprintf("[%s] %s", e.Session, line))
	}
	return lines
}

package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/origin"
	"github.com/switchboard-mcp/switchboard/internal/printable"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// An httpTransport is the http.RoundTripper of one HTTP connection. It
//
//   - adds the server's resolved headers (the SDK's transports have no
//     header option), and its OAuth token over SSE, to the requests to the
//     server's origin alone, refusing or stripping the others (see
//     origin.go);
//   - bounds the server/discover probe's POST by probeTimeout while probing
//     (see negotiate.go);
//   - notes HTTP 401, and 403 with insufficient_scope, so the server can be
//     marked needs-auth whether the answer comes while connecting or after,
//     and transport errors, so a dropped server is noticed at once (the SDK
//     closes the session only after its SSE retries give up, ~22 s);
//   - bounds JSON bodies and repairs unknown content types in responses,
//     both plain JSON and event streams (see content.go);
//   - applies the read cap to the responses of resources/read and
//     prompts/get (see readcap.go).
type httpTransport struct {
	base         http.RoundTripper
	header       http.Header      // resolved: never log it
	origin       origin.Origin    // the server's: where header and the token may go
	home         *url.URL         // the server's URL, as resolved: never log it
	redirects    config.Redirects // which redirects to follow
	sse          bool             // the legacy SSE transport: its endpoint event is checked
	probeTimeout time.Duration
	maxBytes     int
	readCap      int
	server       string         // the server's name, for hints
	oauth        bool           // the server may log in with OAuth: hints say how
	auth         *oauth.Handler // for SSE, which authorizes here; nil otherwise
	trace        *telemetry.Tracer
	cancels      *cancels // told of each notifications/cancelled sent; nil for none
	settle       *settle  // the connection's marks (see settle.go); nil for none
	tasks        tasks    // what the server's tasks need (tasks.go), over Streamable HTTP
	// deliver passes a task's progress to the caller (Pool.progressDeliverer),
	// once connected.
	deliver atomic.Pointer[func(jsonrpc.Message)]

	probing atomic.Bool

	mu      sync.Mutex
	lastErr error   // the last transport error, until taken
	authErr error   // the last authorization failure, until taken
	answer  *answer // the URL's last answer that was not MCP, until taken (see fallback.go)
}

// newHTTPTransport returns the transport of a connection to endpoint, the
// server's URL as resolved, with the server's resolved headers.
func newHTTPTransport(base http.RoundTripper, endpoint string, redirects config.Redirects, headers map[string]config.Secret, probe time.Duration, maxBytes, readCap int) (*httpTransport, error) {
	home, err := url.Parse(endpoint)
	if err != nil {
		return nil, withClass(ClassConfig, errors.New("the server's url, as resolved, is not a URL"))
	}
	o, err := origin.Of(home)
	if err != nil {
		return nil, withClass(ClassConfig, fmt.Errorf("the server's url, as resolved, has no origin to send its credentials to: %v", err))
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v.Reveal())
	}
	return &httpTransport{base: base, header: h, origin: o, home: home, redirects: redirects, probeTimeout: probe, maxBytes: maxBytes, readCap: readCap}, nil
}

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	own, err := t.onOrigin(req)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	if own {
		for k, v := range t.header {
			req.Header[k] = v
		}
	} else {
		t.withoutCredentials(req.Header)
	}
	t.trace.InjectHTTP(req.Context(), propagation.HeaderCarrier(req.Header))
	cancel := context.CancelFunc(func() {})
	head := postHead(req)
	if t.probing.Load() && isProbe(head) {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), t.probeTimeout)
		req = req.WithContext(ctx)
	}
	send := t.base.RoundTrip
	if t.auth != nil && own {
		send = t.authRoundTrip
	}
	resp, err := send(req)
	if t.cancels != nil && bytes.Contains(head, []byte(`"notifications/cancelled"`)) {
		t.cancels.paid() // sent, or failed for good: nothing more to wait for
	}
	if err != nil {
		cancel()
		if req.Context().Err() == nil && authCause(err, nil) == nil {
			t.noteErr(err)
		}
		return nil, err
	}
	if !own {
		// Another origin's challenge must not steer the server's OAuth
		// discovery.
		resp.Header.Del("WWW-Authenticate")
	}
	t.noteAnswer(resp)
	if own {
		t.noteMCP(req, resp)
	}
	var cp *cappedPost
	if bytes.Contains(head, []byte(`"resources/read"`)) || bytes.Contains(head, []byte(`"prompts/get"`)) {
		cp = cappedRequest(head, t.readCap)
	}
	stream := t.sse && req.Method == http.MethodGet
	resp.Body = t.wrapBody(resp, cancel, cp, stream, t.marks(req, stream))
	return resp, nil
}

// marks returns what marks the event stream that answers req (see
// settle.go): the legacy SSE stream, which carries everything in order,
// or the stream of one call whose caller waits for its mark; nil for
// others (the standalone stream, which answers nothing).
func (t *httpTransport) marks(req *http.Request, stream bool) *sseMarks {
	if t.settle == nil {
		return nil
	}
	if stream {
		return &sseMarks{st: t.settle}
	}
	if slot := markSlotOf(req.Context()); slot != nil {
		return &sseMarks{st: t.settle, slot: slot}
	}
	return nil
}

// postHead returns the start of a POST's body, where go-sdk writes a
// request's id and method, or nil.
func postHead(req *http.Request) []byte {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(body, head)
	return head[:n]
}

// isProbe reports whether head starts the POST of a server/discover request.
func isProbe(head []byte) bool {
	return bytes.Contains(head, []byte(`"method":"`+methodDiscover+`"`))
}

// noteAnswer notes an authorization failure, and forgets the last one
// when the server accepts a request (with OAuth, a refused request is
// followed by one with a new token).
func (t *httpTransport) noteAnswer(resp *http.Response) {
	err := authFailure(resp, t.server, t.oauth)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.authErr = err
	case resp.StatusCode < 300:
		t.authErr = nil
	}
}

func (t *httpTransport) noteErr(err error) {
	t.mu.Lock()
	t.lastErr = err
	t.mu.Unlock()
}

// takeErr returns and forgets the last transport error.
func (t *httpTransport) takeErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.lastErr
	t.lastErr = nil
	return err
}

// wrapBody bounds and repairs a response body, and applies the read cap
// when cp is not nil; cancel runs when it is closed. The endpoint event
// of a legacy SSE stream is checked when stream is set.
func (t *httpTransport) wrapBody(resp *http.Response, cancel context.CancelFunc, cp *cappedPost, stream bool, marks *sseMarks) io.ReadCloser {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		b := &jsonBody{rc: resp.Body, max: t.maxBytes, cancel: cancel, capped: cp}
		if !t.sse {
			b.observe = t.observe
		}
		return b
	case "text/event-stream":
		b := &sseBody{rc: resp.Body, r: bufio.NewReaderSize(resp.Body, 32<<10), max: t.maxBytes, cancel: cancel, capped: cp, marks: marks}
		if !t.sse {
			b.observe = t.observe
		}
		if stream {
			b.endpoint = t.checkEndpoint
		}
		return b
	}
	return &closeHook{ReadCloser: resp.Body, cancel: cancel}
}

type closeHook struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *closeHook) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// A jsonBody reads a whole JSON body, at most max bytes, and repairs it.
// The response of a capped request is read no further than the read cap.
type jsonBody struct {
	rc      io.ReadCloser
	max     int
	cancel  context.CancelFunc
	capped  *cappedPost
	observe func(msg []byte) // sees the message (a task's), if set
	r       *bytes.Reader
	err     error
}

func (b *jsonBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		limit := b.max
		if b.capped != nil {
			limit = min(limit, b.capped.limit+capSlack)
		}
		data, err := io.ReadAll(io.LimitReader(b.rc, int64(limit)+1))
		var refusal []byte
		if err == nil && b.capped != nil {
			refusal = b.capped.refuse(data, len(data) <= limit)
		}
		switch {
		case err != nil:
			b.err = err
		case refusal != nil:
			b.r = bytes.NewReader(refusal)
		case len(data) > b.max:
			b.err = withClass(ClassProtocol, fmt.Errorf("response larger than %d MiB", b.max>>20))
		default:
			fixed, _ := sanitizeMessage(bytes.TrimSpace(data))
			if b.observe != nil {
				b.observe(fixed)
			}
			b.r = bytes.NewReader(fixed)
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *jsonBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// An sseBody passes an event stream through line by line, repairing the
// JSON of data lines and bounding each line to max bytes. In the stream of
// a capped request, a data line over the read cap is discarded as it
// streams and replaced by the refusal. With marks, it puts the marks in
// (see settle.go).
type sseBody struct {
	rc      io.ReadCloser
	r       *bufio.Reader
	max     int
	cancel  context.CancelFunc
	capped  *cappedPost
	pending []byte
	line    []byte

	marks   *sseMarks        // nil for none
	observe func(msg []byte) // sees each message (a task's), if set
	// head holds the lines of the current event before its data (event,
	// id), while marks are on: a mark goes before the whole event. Held
	// back, they delay nothing: an event is dispatched at its blank line.
	head []byte
	data bool // the current event has had a data line

	// endpoint checks the data of the stream's first event when it is an
	// endpoint event (legacy SSE); nil once that event is over, and for
	// other streams.
	endpoint func(data []byte) error
	event    []byte // the name of the first event, so far
}

func (b *sseBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if err := b.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *sseBody) next() error {
	b.line = b.line[:0]
	limit := b.max
	if b.capped != nil {
		limit = min(limit, b.capped.limit+capSlack)
	}
	for {
		frag, err := b.r.ReadSlice('\n')
		if len(b.line)+len(frag) > limit {
			if b.capped != nil && bytes.HasPrefix(append(b.line, frag...), []byte("data:")) {
				return b.refuseLine(err)
			}
			return withClass(ClassProtocol, fmt.Errorf("event larger than %d MiB", b.max>>20))
		}
		b.line = append(b.line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(b.line) == 0 {
			if len(b.head) > 0 {
				b.pending, b.head = b.head, nil
				return nil
			}
			return err
		}
		break
	}
	if b.endpoint != nil {
		if err := b.firstEvent(); err != nil {
			return err
		}
	}
	if data, ok := bytes.CutPrefix(b.line, []byte("data:")); ok {
		if b.capped != nil {
			if refusal := b.capped.refuse(bytes.TrimSpace(data), true); refusal != nil {
				b.pending = dataLine(refusal)
				return nil
			}
		}
		fixed, ok := sanitizeMessage(bytes.TrimSpace(data))
		if ok {
			b.line = append(append([]byte("data: "), fixed...), '\n')
		}
		if b.observe != nil {
			b.observe(fixed)
		}
	}
	b.pending = b.line
	if b.marks != nil {
		b.mark()
	}
	return nil
}

// mark holds back the head of an event and puts a mark before the event
// when its data calls for one.
func (b *sseBody) mark() {
	line := b.pending
	switch {
	case len(bytes.TrimRight(line, "\r\n")) == 0: // the event's end
		b.data = false
	case bytes.HasPrefix(line, []byte("data:")):
		first := !b.data
		b.data = true
		if first {
			if m := b.marks.before(bytes.TrimSpace(line[len("data:"):])); m != nil {
				b.pending = append(append(m, b.head...), line...)
				b.head = b.head[:0]
				return
			}
		}
	default:
		// Held back, up to maxHead: a stream of comment lines with no
		// event to end them passes through, and an event that long goes
		// unmarked.
		if !b.data && len(b.head)+len(line) <= maxHead {
			b.head = append(b.head, line...)
			b.pending = nil
			return
		}
	}
	if len(b.head) > 0 {
		b.pending = append(b.head, line...)
		b.head = nil
	}
}

// maxHead bounds the lines of an event held back before its data.
const maxHead = 64 << 10

// sseMarks puts the marks in one event stream (see settle.go): a stream
// that carries everything in order (legacy SSE) when slot is nil, else the
// stream of the call that waits on slot.
type sseMarks struct {
	st   *settle
	slot *markSlot
	seen bool // a message has passed (the stream of a call)
}

// before returns the mark event to put before a message, or nil.
func (m *sseMarks) before(data []byte) []byte {
	if m.slot != nil && !m.seen {
		m.seen = true
		return nil
	}
	if m.slot == nil && !m.st.dirty.Load() && !bytes.Contains(data, []byte(`"method"`)) {
		return nil // neither a notification nor an answer that follows one
	}
	msg, ok := scanEnvelope(data)
	if !ok {
		var err error
		if msg, err = jsonrpc.DecodeMessage(data); err != nil {
			return nil // go-sdk refuses it
		}
	}
	var mark jsonrpc.Message
	if m.slot == nil {
		if m.st.read(msg) {
			mark = m.st.mark()
		}
	} else if _, answer := msg.(*jsonrpc.Response); answer {
		var n uint64
		mark, n = m.st.newMark()
		m.slot.n.Store(n)
	}
	if mark == nil {
		return nil
	}
	enc, err := jsonrpc.EncodeMessage(mark)
	if err != nil {
		return nil
	}
	return append(append([]byte("data: "), enc...), '\n', '\n')
}

// firstEvent follows the first event of a legacy SSE stream, line by
// line, and checks its data when it is the endpoint event, before go-sdk
// reads it.
func (b *sseBody) firstEvent() error {
	line := bytes.TrimRight(b.line, "\r\n")
	if name, ok := bytes.CutPrefix(line, []byte("event:")); ok {
		b.event = bytes.TrimSpace(name)
		return nil
	}
	if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && string(b.event) == "endpoint" {
		return b.endpoint(bytes.TrimSpace(data))
	}
	if len(line) == 0 {
		b.endpoint = nil // the first event is over
	}
	return nil
}

// refuseLine discards the rest of an oversized data line, whose last read
// ended with err, and puts the refusal in its place.
func (b *sseBody) refuseLine(err error) error {
	for err == bufio.ErrBufferFull {
		_, err = b.r.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return err
	}
	b.pending = dataLine(b.capped.refusal(-1))
	return nil
}

func dataLine(msg []byte) []byte {
	return append(append([]byte("data: "), msg...), '\n')
}

func (b *sseBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// httpClientTransport returns the SDK transport of typ, Streamable HTTP or
// legacy SSE, for an HTTP server. life bounds the lifetime of a legacy SSE
// stream.
func httpClientTransport(life context.Context, typ config.Transport, url string, rt *httpTransport, auth *oauth.Handler) mcp.Transport {
	client := &http.Client{Transport: rt, CheckRedirect: rt.checkRedirect}
	if typ == config.TransportSSE {
		rt.auth, rt.sse = auth, true
		sse := &sseTransport{life: life, inner: &mcp.SSEClientTransport{Endpoint: url, HTTPClient: client, MaxEventSize: rt.maxBytes}}
		return readCapTransport{Transport: sse, limit: rt.readCap}
	}
	t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: 2, MaxEventSize: rt.maxBytes}
	if auth != nil {
		t.OAuthHandler = auth
	}
	return t
}

// authFailure returns the auth error a response means, or nil: HTTP 401,
// or 403 whose WWW-Authenticate challenge says insufficient_scope (RFC 6750
// section 3.1), naming the scope the server asks for. The hint names the
// login command when the server may log in with OAuth.
func authFailure(resp *http.Response, server string, oauth bool) error {
	switch {
	case resp.StatusCode == http.StatusUnauthorized && oauth:
		return withClass(ClassAuth, fmt.Errorf("needs-auth: the server answered HTTP 401 Unauthorized; hint: switchboard auth login %s if it logs in with OAuth, else give it credentials in the server's headers", server))
	case resp.StatusCode == http.StatusUnauthorized:
		return withClass(ClassAuth, errors.New("the server answered HTTP 401 Unauthorized; hint: give it credentials in the server's headers"))
	case resp.StatusCode != http.StatusForbidden:
		return nil
	}
	challenge := strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
	if !strings.Contains(challenge, "insufficient_scope") {
		return nil
	}
	msg := "the server answered HTTP 403 Forbidden: insufficient_scope"
	if m := scopeRE().FindStringSubmatch(challenge); m != nil {
		msg += fmt.Sprintf(" (it asks for scope %q)", printable.Clip(m[1], 200))
	}
	if oauth {
		return withClass(ClassAuth, fmt.Errorf("needs-auth: %s; hint: switchboard auth login %s", msg, server))
	}
	return withClass(ClassAuth, errors.New(msg+"; hint: give it a token with that scope in the server's headers"))
}

var scopeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`scope="([^"]*)"`) })

// takeAuth returns and forgets the last authorization failure.
func (t *httpTransport) takeAuth() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.authErr
	t.authErr = nil
	return err
}

// classify replaces err, the failure to connect, when the server refused
// authorization meanwhile: with the OAuth error that says why, else with
// the refusal.
func (t *httpTransport) classify(err error) error {
	auth := t.takeAuth()
	if err == nil {
		return nil
	}
	if cause := authCause(err, nil); cause != nil {
		return cause
	}
	if auth != nil {
		return auth
	}
	return err
}

// An sseTransport connects a legacy SSE transport with a context that
// outlives Connect. go-sdk's SSEClientTransport.Connect (mcp/sse.go) makes its
// event stream's GET with the context given to Connect, so a Connect bounded
// by a timeout would end the stream, and the session, as soon as it returns.
// Here the caller's context bounds only the connecting; the stream ends when
// the connection is closed or life ends.
type sseTransport struct {
	life  context.Context
	inner *mcp.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(sctx)
	if !stop() && err == nil {
		_ = conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultURL is the official registry's.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// apiPath is the API version Switchboard speaks. The registry serves v0
// and v0.1 with the same types; v0.1 is the frozen one.
const apiPath = "/v0.1"

// Errors.
var (
	// ErrNotFound: the registry has no such server or version.
	ErrNotFound = errors.New("not in the registry")
	// ErrOffline: the registry did not answer (or answered 5xx), and no
	// answer to the same question is cached.
	ErrOffline = errors.New("the registry does not answer")
)

// Client asks one registry. Its zero value is not usable: use New.
type Client struct {
	base  string // without a final slash
	http  *http.Client
	cache string // "" for no cache
	now   func() time.Time
}

// Options changes what New makes.
type Options struct {
	// HTTPClient asks the registry; nil is a client with a 30s timeout.
	HTTPClient *http.Client
	// CacheDir keeps the last answers, for when the registry does not
	// answer; "" keeps none.
	CacheDir string
}

// New returns a client of the registry at base (DefaultURL when "").
func New(base string, opts *Options) (*Client, error) {
	if base == "" {
		base = DefaultURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("invalid registry URL %q: write it as https://HOST[/PATH] (settings.registry)", base)
	}
	c := &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: 30 * time.Second}, now: time.Now}
	if opts != nil {
		if opts.HTTPClient != nil {
			c.http = opts.HTTPClient
		}
		if opts.CacheDir != "" {
			c.cache = filepath.Join(opts.CacheDir, "registry")
		}
	}
	return c, nil
}

// URL is the registry's base URL.
func (c *Client) URL() string { return c.base }

// Answer says where an answer came from.
type Answer struct {
	// Offline is set when the registry did not answer and this is the
	// cached answer to the same question, from CachedAt.
	Offline  bool
	CachedAt time.Time
	// Why is the error that made the answer come from the cache.
	Why error
}

// SearchOptions changes what Search finds.
type SearchOptions struct {
	Cursor string // from a Page's Next
	Limit  int    // per page; 0 is 30
	All    bool   // also deprecated and deleted entries
}

// Page is one page of search results.
type Page struct {
	Answer
	Entries []Entry
	Next    string // the cursor of the next page; "" on the last
	Skipped int    // entries left out because they break the format
}

// Search lists the latest version of the servers whose name, title or
// description hold every word of query: the registry matches the longest
// word in names; the rest is filtered here.
func (c *Client) Search(ctx context.Context, query string, opts SearchOptions) (*Page, error) {
	words := strings.Fields(strings.ToLower(query))
	q := url.Values{"version": {"latest"}}
	if len(words) > 0 {
		longest := slices.MaxFunc(words, func(a, b string) int { return len(a) - len(b) })
		q.Set("search", longest)
	}
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	limit := opts.Limit
	if limit <= 0 || limit > 100 {
		limit = 30
	}
	q.Set("limit", strconv.Itoa(limit))
	if opts.All {
		q.Set("include_deleted", "true")
	}
	body, ans, err := c.get(ctx, apiPath+"/servers", q)
	if err != nil {
		return nil, err
	}
	entries, next, skipped, err := decodeList(body)
	if err != nil {
		return nil, c.garbage(err)
	}
	p := &Page{Answer: ans, Next: next, Skipped: skipped}
	for _, e := range entries {
		if (opts.All || e.Status() == StatusActive) && matches(&e.Server, words) {
			p.Entries = append(p.Entries, e)
		}
	}
	return p, nil
}

func matches(s *Server, words []string) bool {
	text := strings.ToLower(s.Name + " " + s.Title + " " + s.Description)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// Get returns one version of a server; "" or "latest" is the latest. The
// answer must be the server and version asked for.
func (c *Client) Get(ctx context.Context, name, version string) (*Entry, Answer, error) {
	if !ValidName(name) {
		return nil, Answer{}, fmt.Errorf("invalid registry name %q: registry names are written NAMESPACE/NAME, such as io.github.user/weather", name)
	}
	if version == "" {
		version = "latest"
	}
	body, ans, err := c.get(ctx, apiPath+"/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil)
	if err != nil {
		return nil, ans, err
	}
	e, err := decodeEntry(body)
	if err != nil {
		return nil, ans, c.garbage(err)
	}
	if e.Server.Name != name || version != "latest" && e.Server.Version != version {
		return nil, ans, c.garbage(fmt.Errorf("%w: asked for %s@%s, got %s@%s", ErrGarbage, name, version, e.Server.Name, e.Server.Version))
	}
	return e, ans, nil
}

// Versions lists every version of a server the registry has.
func (c *Client) Versions(ctx context.Context, name string) ([]Entry, Answer, error) {
	if !ValidName(name) {
		return nil, Answer{}, fmt.Errorf("invalid registry name %q: registry names are written NAMESPACE/NAME", name)
	}
	body, ans, err := c.get(ctx, apiPath+"/servers/"+url.PathEscape(name)+"/versions", nil)
	if err != nil {
		return nil, ans, err
	}
	entries, _, _, err := decodeList(body)
	if err != nil {
		return nil, ans, c.garbage(err)
	}
	var out []Entry
	for _, e := range entries {
		if e.Server.Name == name {
			out = append(out, e)
		}
	}
	return out, ans, nil
}

func (c *Client) garbage(err error) error {
	return fmt.Errorf("reading the answer of the registry at %s: %w (hint: check settings.registry)", c.base, err)
}

// get asks the registry, and keeps the answer in the cache; when the
// registry does not answer or answers 5xx, the cached answer to the same
// question is returned instead.
func (c *Client) get(ctx context.Context, path string, q url.Values) ([]byte, Answer, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	body, err := c.fetch(ctx, u)
	if err == nil {
		c.store(u, body)
		return body, Answer{}, nil
	}
	if !errors.Is(err, ErrOffline) || ctx.Err() != nil {
		return nil, Answer{}, err
	}
	if cached, at, ok := c.load(u); ok {
		return cached, Answer{Offline: true, CachedAt: at, Why: err}, nil
	}
	return nil, Answer{}, err
}

func (c *Client) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("asking the registry: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrOffline, c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w at %s: reading its answer: %v", ErrOffline, c.base, err)
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode >= 500:
		return nil, fmt.Errorf("%w at %s: it answered %s", ErrOffline, c.base, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("asking the registry at %s: it answered %s: %s", c.base, resp.Status, snippet(body))
	case len(body) > maxBody:
		return nil, c.garbage(fmt.Errorf("%w: over %d MiB", ErrGarbage, maxBody>>20))
	}
	return body, nil
}

// snippet is the start of an error answer, for a message.
func snippet(b []byte) string {
	var problem struct {
		Detail string `json:"detail"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(b, &problem) == nil && problem.Detail+problem.Title != "" {
		b = []byte(strings.TrimSpace(problem.Title + ": " + problem.Detail))
	}
	if len(b) > 200 {
		b = b[:200]
	}
	s := strings.ToValidUTF8(string(b), "?")
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
}

// cached is one cached answer.
type cached struct {
	URL  string          `json:"url"`
	At   time.Time       `json:"at"`
	Body json.RawMessage `json:"body"`
}

func (c *Client) cacheFile(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.cache, hex.EncodeToString(sum[:12])+".json")
}

// store keeps an answer that decoded; a failure to keep it is not the
// caller's problem.
func (c *Client) store(u string, body []byte) {
	if c.cache == "" || !json.Valid(body) {
		return
	}
	data, err := json.Marshal(cached{URL: u, At: c.now().UTC(), Body: body})
	if err != nil || os.MkdirAll(c.cache, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(c.cache, ".answer-*")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(f.Name(), c.cacheFile(u)) != nil {
		os.Remove(f.Name())
	}
}

func (c *Client) load(u string) ([]byte, time.Time, bool) {
	if c.cache == "" {
		return nil, time.Time{}, false
	}
	data, err := os.ReadFile(c.cacheFile(u))
	if err != nil || len(data) > 2*maxBody {
		return nil, time.Time{}, false
	}
	var a cached
	if json.Unmarshal(data, &a) != nil || a.URL != u {
		return nil, time.Time{}, false
	}
	return a.Body, a.At, true
}

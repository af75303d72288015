package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// apiServer is an in-process Streamable HTTP MCP server with an echo tool
// that answers HTTP 401 while refuse is set.
func apiServer(t *testing.T, refuse *atomic.Bool) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "api", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// unreachable defines one good server and one of each way a server can
// fail to connect: a start that fails, an unset ${VAR}, an initialize that
// hangs, an HTTP connection refused, and HTTP 401.
func unreachable(t *testing.T) map[string]def {
	refuse := &atomic.Bool{}
	refuse.Store(true)
	return map[string]def{
		"good":    fixture(testserver.Good),
		"broken":  fixture(testserver.ExitAtStart),
		"unset":   mergeDef(fixture(testserver.Good), def{"env": map[string]string{testserver.Env: testserver.Good, "API_TOKEN": "${SB_TRUTH_UNSET_TOKEN}"}}),
		"hang":    mergeDef(fixture(testserver.NoInit), def{"requestTimeoutMs": 1000}),
		"refused": {"url": "http://127.0.0.1:1/mcp"},
		"auth":    {"url": apiServer(t, refuse).URL, "protocolVersion": "legacy"},
	}
}

// causes are what each unreachable server's error must say.
var causes = map[string][]string{
	"broken":  {`connecting "broken"`, "exited with status 1", "Cannot find module '/nowhere/index.js'"},
	"unset":   {`connecting "unset"`, "config.json", "SB_TRUTH_UNSET_TOKEN", "is not set or empty", "(hint: export SB_TRUTH_UNSET_TOKEN before starting switchboard)"},
	"hang":    {`connecting "hang"`, "timed out after 1s"},
	"refused": {`connecting "refused"`, "connection refused"},
	"auth":    {`connecting "auth"`, "HTTP 401 Unauthorized", "hint: give it credentials in the server's headers"},
}

var classes = map[string]string{"broken": "start", "unset": "config", "hang": "timeout", "refused": "transport", "auth": "auth"}

// TestUnreachableServersSayWhy checks that a call or describe on a server
// never indexed that cannot connect returns that server's error, not
// "unknown tool", and that without "server" the error names every server
// that could not be searched, and why.
func TestUnreachableServersSayWhy(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, unreachable(t), nil)
	for name, want := range causes {
		for _, req := range []*proxy.Request{
			{Action: proxy.ActionCall, Name: "echo", Server: name},
			{Action: proxy.ActionDescribe, Name: "echo", Server: name},
		} {
			r := e.Do(t.Context(), req) // the library
			if !r.IsError || strings.Contains(r.Text, "unknown tool") {
				t.Errorf("%s on %s: got %q, want the connect error", req.Action, name, r.Text)
			}
			wantText(t, r, want...)
			if r.Details.Server != name || r.Details.Error != r.Text {
				t.Errorf("%s on %s: details %+v, want the server and its error", req.Action, name, r.Details)
			}
		}
	}

	for _, req := range []string{`{"tool":"nope","args":{}}`, `{"describe":"nope"}`} {
		r := handle(t, e, req) // the mcp tool
		if !r.IsError {
			t.Fatalf("%s: got success:\n%s", req, r.Text)
		}
		wantText(t, r, `unknown tool "nope" on the 1 server that answered (good), but 5 could not be searched`)
		for name, want := range causes {
			wantText(t, r, `not searched: "`+name+`"`)
			wantText(t, r, want...)
		}
		got := map[string]string{}
		for _, f := range r.Details.Failed {
			got[f.Server] = f.ErrorClass
			if !strings.Contains(r.Text, f.Error) && !strings.Contains(f.Error, "\n") {
				t.Errorf("%s: failed %s: error %q is not in the text", req, f.Server, f.Error)
			}
		}
		if len(got) != len(classes) {
			t.Errorf("%s: details.failed = %v, want %v", req, got, classes)
		}
		for name, class := range classes {
			if got[name] != class {
				t.Errorf("%s: class of %s = %q, want %q", req, name, got[name], class)
			}
		}
	}

	// A name that is on a server that answered still works, and one close
	// to it is suggested.
	must(t, e, `{"tool":"echo","args":{"text":"hi"}}`)
	r := handle(t, e, `{"describe":"ech"}`)
	wantText(t, r, "did you mean: echo (good)", "5 could not be searched")
}

// TestSearchSaysWhatAnswered checks that a search where some servers
// failed says how many answered, keeps each failure's hint whole, and that
// a search of one server that failed is its error.
func TestSearchSaysWhatAnswered(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	servers := unreachable(t)
	delete(servers, "hang") // slow, and said above
	e := newEngine(t, servers, nil)
	r := must(t, e, `{"search":"echo"}`)
	wantText(t, r, `1 tool matches "echo" on 1 of 5 servers (4 could not be searched)`)
	if strings.Contains(r.Text, "on 5 servers") {
		t.Errorf("search counts servers that could not be searched:\n%s", r.Text)
	}
	for name, want := range causes {
		if name == "hang" {
			continue
		}
		wantText(t, r, `not searched: "`+name+`"`)
		wantText(t, r, want...)
	}
	if len(r.Details.Failed) != 4 || len(r.Details.Search.Failed) != 4 {
		t.Errorf("details.failed %v, search.failed %v: want the 4 servers", r.Details.Failed, r.Details.Search.Failed)
	}

	r = handle(t, e, `{"search":"echo","server":"unset"}`)
	if !r.IsError {
		t.Errorf("a search of one server that cannot connect succeeded:\n%s", r.Text)
	}
	wantText(t, r, causes["unset"]...)

	r = must(t, e, `{"search":"zzzqqq"}`)
	wantText(t, r, `no tools match "zzzqqq" on 1 of 5 servers (4 could not be searched) (good)`)
}

// TestSearchNoServerAnswered checks the answer when every server failed.
func TestSearchNoServerAnswered(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"broken": fixture(testserver.ExitAtStart)}, nil)
	r := must(t, e, `{"search":"echo"}`)
	wantText(t, r, `nothing searched for "echo": none of the 1 server could be searched`, causes["broken"][2])
	if strings.Contains(r.Text, "try other words") {
		t.Errorf("other words will not help:\n%s", r.Text)
	}
	// A call: the only server could not be listed, and its error says why.
	r = handle(t, e, `{"tool":"echo"}`)
	wantText(t, r, causes["broken"]...)
	if strings.Contains(r.Text, "not found") || strings.Contains(r.Text, "unknown tool") {
		t.Errorf("a tool of the only server, which could not be listed, is not unknown:\n%s", r.Text)
	}
}

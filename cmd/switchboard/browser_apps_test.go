package main

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/chromium"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// isoTime is what the example app shows once get-time has answered.
var isoTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$`)

// TestBrowserRendersApp renders the MCP Apps example app
// (server-basic-vanillajs) in headless Chromium as a host does, through
// `switchboard serve --http` and, as the baseline, from the server's own
// HTTP endpoint: a page with the ext-apps SDK's host bridge (AppBridge, its
// PostMessageTransport) and the TypeScript SDK's client (testdata/apphost)
// lists the tools claiming the UI extension, reads the tool's ui://
// resource, runs it in a sandboxed frame, calls the tool as the model would
// and hands the app the result; then the mouse clicks the app's "Get Server
// Time" button, whose tools/call the bridge routes to the server. Both
// ways the frame shows the app's UI and a fresh server time after the
// click, and through serve the audit trail holds both calls.
//
// serve sends no CORS headers, so a page on another origin cannot read its
// answers: the page reaches both endpoints through its own origin, where
// the host's backend relays the requests (as a web host's backend holds
// its MCP connections).
func TestBrowserRendersApp(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	chromium.Path(t) // skips (or fails) before anything starts when there is none
	app := peers.BasicApp()
	bin, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	// serveApp starts serve in front of the example server, configured as
	// basic (with extra fields), and returns its endpoint and environment.
	serveApp := func(extra map[string]any) (endpoint string, env []string) {
		home := t.TempDir()
		basic := map[string]any{"command": app.Path, "args": app.Args}
		maps.Copy(basic, extra)
		writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"basic": basic}})
		env = serveEnv(home)
		index := exec.Command(bin, "index")
		index.Env = env
		if out, err := index.CombinedOutput(); err != nil {
			t.Fatalf("switchboard index: %v\n%s", err, out)
		}
		return startServe(t, env, "--http", "127.0.0.1:0"), env
	}
	served, servedEnv := serveApp(nil)
	bare, bareEnv := serveApp(map[string]any{"toolPrefix": "none"})
	host := appHost(t, peers.Dir, map[string]string{
		"/direct/mcp": peers.ServeBasicApp(t),
		"/serve/mcp":  served,
		"/bare/mcp":   bare,
	})
	// Started last, closed first: the pages' connections end before the
	// host's server closes.
	browser := chromium.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	direct := renderApp(ctx, t, browser, host+"/?mcp=/direct/mcp&tool=get-time")
	if want := (appView{HostResult: "TIME", Clicked: "TIME", AppCalls: []string{"get-time: ok"}}); direct.HostResult != want.HostResult || direct.Clicked != want.Clicked || !slices.Equal(direct.AppCalls, want.AppCalls) {
		t.Fatalf("the app directly: %+v, want it to show the time after the host's call and after the click", direct)
	}
	for _, c := range []struct {
		name, path, tool string
		env              []string
	}{
		// The app calls get-time, its server's own name for the tool, which
		// serve lists as basic_get-time.
		{"serve", "/serve/mcp", "basic_get-time", servedEnv},
		// With the server's toolPrefix "none", serve lists it as get-time.
		{"serve toolPrefix none", "/bare/mcp", "get-time", bareEnv},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := renderApp(ctx, t, browser, host+"/?mcp="+c.path+"&tool="+c.tool)
			if diff := cmp.Diff(direct, got); diff != "" {
				t.Errorf("the app through serve (-directly +through serve):\n%s", diff)
			}
			// Both calls, the host's and the app's, went through serve's
			// pipeline to the server.
			audit := exec.Command(bin, "audit", "--json", "--server", "basic")
			audit.Env = c.env
			out, err := audit.Output()
			if err != nil {
				t.Fatalf("switchboard audit: %v", err)
			}
			var calls []string
			for line := range strings.Lines(string(out)) {
				var rec struct{ Event, Tool, Outcome string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("switchboard audit --json: %v\n%s", err, out)
				}
				calls = append(calls, rec.Event+" "+rec.Tool+" "+rec.Outcome)
			}
			if want := []string{"call get-time ok", "call get-time ok"}; !slices.Equal(calls, want) {
				t.Errorf("audit trail of basic: %q, want %q\n%s", calls, want, out)
			}
		})
	}
}

// appView is what a rendered app showed.
type appView struct {
	Text       string   // the frame's text, the server time masked
	HostResult string   // the time shown after the host's call
	Clicked    string   // the time shown after the button's call, masked
	AppCalls   []string // the app's tools/call through the bridge
}

// renderApp opens the host page at url and drives the app as a user does.
func renderApp(ctx context.Context, t *testing.T, b *chromium.Browser, url string) appView {
	t.Helper()
	page, err := b.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := page.Main().Eval(ctx, "window.host", nil); err != nil {
		t.Fatalf("the host page at %s: %v", url, err)
	}
	frame, err := page.Frame(ctx, "#app")
	if err != nil {
		t.Fatal(err)
	}
	var v appView
	// The host's call's result, once the app shows it.
	if err := frame.Eval(ctx, `new Promise(resolve => {
		const el = document.getElementById("server-time");
		const done = () => el.textContent !== "Loading..." && (resolve(el.textContent), true);
		if (!done()) new MutationObserver((_, o) => done() && o.disconnect()).observe(el, {childList: true, characterData: true, subtree: true});
	})`, &v.HostResult); err != nil {
		t.Fatal(err)
	}
	if !isoTime.MatchString(v.HostResult) {
		t.Errorf("%s: the app shows %q after the host's call, want a time", url, v.HostResult)
	}
	if err := frame.Eval(ctx, `document.body.innerText`, &v.Text); err != nil {
		t.Fatal(err)
	}
	v.Text = strings.ReplaceAll(v.Text, v.HostResult, "TIME")
	v.HostResult = "TIME"

	// A click on "Get Server Time": the app calls get-time through the
	// bridge and shows what it answers.
	var at struct{ X, Y float64 }
	if err := page.Main().Eval(ctx, `(() => { const r = document.getElementById("app").getBoundingClientRect(); return {x: r.left, y: r.top} })()`, &at); err != nil {
		t.Fatal(err)
	}
	var btn struct{ X, Y float64 }
	if err := frame.Eval(ctx, `(() => {
		const el = document.getElementById("server-time");
		window.switchboardNext = new Promise(resolve => new MutationObserver((_, o) => { o.disconnect(); resolve(el.textContent) }).observe(el, {childList: true, characterData: true, subtree: true}));
		const r = document.getElementById("get-time-btn").getBoundingClientRect();
		return {x: r.left + r.width / 2, y: r.top + r.height / 2};
	})()`, &btn); err != nil {
		t.Fatal(err)
	}
	if err := page.Click(ctx, at.X+btn.X, at.Y+btn.Y); err != nil {
		t.Fatal(err)
	}
	if err := frame.Eval(ctx, `window.switchboardNext`, &v.Clicked); err != nil {
		t.Fatal(err)
	}
	if isoTime.MatchString(v.Clicked) {
		v.Clicked = "TIME"
	}
	var calls []struct {
		Name   string
		Result *struct{ IsError bool }
		Error  string
	}
	if err := page.Main().Eval(ctx, `window.appCalls`, &calls); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		switch {
		case c.Error != "":
			v.AppCalls = append(v.AppCalls, c.Name+": "+c.Error)
		case c.Result == nil || c.Result.IsError:
			v.AppCalls = append(v.AppCalls, c.Name+": an error result")
		default:
			v.AppCalls = append(v.AppCalls, c.Name+": ok")
		}
	}
	return v
}

// appHost serves the host page of testdata/apphost, the peers'
// node_modules it imports, and, at each path of relay, the MCP endpoint
// it names: the requests relayed as a host's backend sends them (without
// the browser's Origin, Referer and Sec-Fetch headers), the answers
// streamed back. It returns the page's origin.
func appHost(t *testing.T, peersDir string, relay map[string]string) string {
	t.Helper()
	mux := http.NewServeMux()
	for path, file := range map[string]string{"GET /{$}": "host.html", "GET /host.js": "host.js"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			http.ServeFile(w, r, filepath.Join("testdata", "apphost", file))
		})
	}
	mux.Handle("GET /node_modules/", http.StripPrefix("/node_modules/", http.FileServer(http.Dir(filepath.Join(peersDir, "node_modules")))))
	for path, endpoint := range relay {
		to, err := url.Parse(endpoint)
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle(path, &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				u := *to
				r.Out.URL = &u
				r.Out.Host = ""
				for _, h := range []string{"Origin", "Referer", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest"} {
					r.Out.Header.Del(h)
				}
			},
			FlushInterval: -1,
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

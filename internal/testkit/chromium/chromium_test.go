package chromium

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// A page on loopback with a sandboxed frame (its own process in Chromium)
// whose button, clicked by the mouse, changes the frame's text: the kit
// finds the frame, evaluates in it, clicks it and waits on the change.
const page = `<!doctype html><html><body style="margin:0">
<iframe id="f" sandbox="allow-scripts" style="border:0;width:400px;height:200px" srcdoc="
<button id=b style='position:absolute;left:10px;top:10px;width:100px;height:40px'>go</button><p id=t>before</p>
<script>b.onclick = () => { t.textContent = 'clicked' }</script>"></iframe>
</body></html>`

func TestBrowser(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	b := Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := b.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Frame(ctx, "#f")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("frame in its own session: %v", f.session != p.session)
	var text string
	if err := f.Eval(ctx, `document.getElementById("t").textContent`, &text); err != nil || text != "before" {
		t.Fatalf("frame text: got %q, %v; want before", text, err)
	}
	if err := f.Eval(ctx, `window.changed = new Promise(r => new MutationObserver(() => r(document.getElementById("t").textContent)).observe(document.getElementById("t"), {childList: true})), true`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, 60, 30); err != nil {
		t.Fatal(err)
	}
	if err := f.Eval(ctx, `window.changed`, &text); err != nil || text != "clicked" {
		t.Fatalf("frame text after the click: got %q, %v; want clicked", text, err)
	}
}

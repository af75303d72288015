package front

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// loginGateway is a gateway whose one server, "api", needs an OAuth login,
// with the gateway's own prompter.
func loginGateway(t *testing.T, as *oauthtest.Server) *testGateway {
	t.Helper()
	d := config.Dirs{Home: t.TempDir()}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}}})
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := New(t.Context(), config.Load(d), &Options{Engine: switchboard.Options{SpillDir: filepath.Join(d.Home, "spill"),
		Credentials: credstore.NewFile(filepath.Join(d.Home, "credentials"))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &testGateway{srv: srv}
}

func callText(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestLoginByURLElicitation: a client that supports URL-mode elicitation
// is sent the authorization URL when its call needs a login; once the user
// has logged in, the call goes on, and the client is told the login is
// over. A client without it gets needs-auth and the command to run.
func TestLoginByURLElicitation(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} { // "": the newest, multi round-trip
		t.Run("version "+version, func(t *testing.T) { loginByURLElicitation(t, version) })
	}
}

func loginByURLElicitation(t *testing.T, version string) {
	as := oauthtest.New(t, oauthtest.Options{})
	g := loginGateway(t, as)
	echo := map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}}

	plain := g.connectAt(t, &mcp.ClientOptions{}, version)
	text, isErr := callText(t, plain, echo)
	if !isErr || !strings.Contains(text, "needs-auth") || !strings.Contains(text, "switchboard auth login api") || !strings.Contains(text, "URL elicitation") {
		t.Fatalf("a client without URL elicitation: %v %s", isErr, text)
	}

	var asked []*mcp.ElicitParams
	complete := make(chan string, 1)
	cs := g.connectAt(t, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params)
			if _, err := oauthtest.Follow(ctx, req.Params.URL); err != nil { // the user's browser approves
				return nil, err
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			complete <- req.Params.ElicitationID
		},
	}, "")
	text, isErr = callText(t, cs, echo)
	if isErr || text != "hi" {
		t.Fatalf("with URL elicitation: %v %s", isErr, text)
	}
	if len(asked) != 1 || asked[0].Mode != "url" || !strings.HasPrefix(asked[0].URL, as.AS.URL+"/authorize?") || !strings.Contains(asked[0].Message, "api") {
		t.Fatalf("elicitations: %+v", asked)
	}
	if id := <-complete; id != asked[0].ElicitationID {
		t.Errorf("completion for %q, want %q", id, asked[0].ElicitationID)
	}
	// Logged in for everyone now.
	if text, isErr := callText(t, plain, echo); isErr || text != "hi" {
		t.Errorf("the other client after the login: %v %s", isErr, text)
	}
}

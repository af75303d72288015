package upstream

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// TestBearerNoted: the bearer token a connection sends (an OAuth token,
// which the pool never resolves itself) joins the secrets it replaces.
func TestBearerNoted(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ts.Close()
	set := &redact.Set{}
	req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	req.Header.Set("Authorization", "Bearer oauth-token-1234")
	resp, err := bearerNoter{http.DefaultTransport, set}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := set.String("refused oauth-token-1234"); got != "refused [redacted]" {
		t.Errorf("after the request: %q", got)
	}
}

// TestRedactMessages: a result, and a request a server sends, lose the
// secret values wherever they hold them, as values of the same type.
func TestRedactMessages(t *testing.T) {
	set := &redact.Set{}
	set.Add("key-5678")
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "KEY=key-5678"}, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///k", Text: "key-5678"}}},
		StructuredContent: map[string]any{"key": "key-5678", "n": 1.0},
	}
	clean := redactCopy(set, res)
	if clean == res || clean.Content[0].(*mcp.TextContent).Text != "KEY=[redacted]" ||
		clean.Content[1].(*mcp.EmbeddedResource).Resource.Text != "[redacted]" ||
		clean.StructuredContent.(map[string]any)["key"] != "[redacted]" || clean.StructuredContent.(map[string]any)["n"] != 1.0 {
		t.Errorf("redacted result: %+v", clean)
	}
	if res.Content[0].(*mcp.TextContent).Text != "KEY=key-5678" {
		t.Error("the original result was changed")
	}
	plain := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nothing secret"}}}
	if redactCopy(set, plain) != plain {
		t.Error("a result with no secret was copied")
	}
	p := &mcp.ElicitParams{Message: "approve key-5678?"}
	redactInPlace(set, p)
	if p.Message != "approve [redacted]?" {
		t.Errorf("elicitation message %q", p.Message)
	}
}

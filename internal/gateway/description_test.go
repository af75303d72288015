package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// cl100k counts tokens the way OpenAI's cl100k_base does, offline.
func cl100k(t *testing.T, s string) int {
	t.Helper()
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return len(enc.Encode(s, nil, nil))
}

// TestToolDefinitionIsSmallAndStable checks the whole tool definition of a
// gateway with ten indexed servers against the token budget, and that the
// description does not change between calls and engines.
func TestToolDefinitionIsSmallAndStable(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	servers := map[string]def{}
	for i := range 10 {
		servers[fmt.Sprintf("server-%02d", i)] = fixture(testserver.Good)
	}
	e := newEngine(t, servers, nil)
	if _, err := e.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	tool := e.Tool(t.Context())
	if !strings.Contains(tool.Description, "server-03 (9 tools, "+testserver.Instructions[:10]) {
		t.Errorf("description does not name servers with their tool counts and instructions:\n%s", tool.Description)
	}
	n := cl100k(t, tool.Name) + cl100k(t, tool.Description) + cl100k(t, string(tool.InputSchema))
	t.Logf("tool definition: %d cl100k tokens (%d bytes of description)", n, len(tool.Description))
	if n >= 400 {
		t.Errorf("tool definition is %d tokens with 10 servers, want under 400:\n%s", n, tool.Description)
	}
	if again := e.Tool(t.Context()); again.Description != tool.Description {
		t.Errorf("description changed between calls:\n%s\n---\n%s", tool.Description, again.Description)
	}
}

package front

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestLogLevelsAndSubscriptions checks, in transparent mode in front of
// go-sdk's conformance server, that a client's log level reaches the server
// and only that client gets log messages, and that a subscribed client
// hears of resource updates (the server updates test://watched-resource
// every 3 seconds).
func TestLogLevelsAndSubscriptions(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	upstream := mcptest.StatefulConformanceServer(t)
	g := newGateway(t, map[string]def{"conformance": {"url": upstream}}, map[string]any{"toolPrefix": "none"})

	logs := make(chan string, 10)
	updated := make(chan string, 10)
	client := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{
			LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
				logs <- name
			},
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			},
		}
	}
	loud := g.connectAt(t, client("loud"), "2025-11-25")
	quiet := g.connectAt(t, client("quiet"), "2025-11-25")
	if err := loud.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call(t, quiet, "test_tool_with_logging", map[string]any{})
	call(t, loud, "test_tool_with_logging", map[string]any{})
	// Notifications may trail the result they came before.
	for range 3 {
		select {
		case name := <-logs:
			if name != "loud" {
				t.Errorf("client %q got a log message without setting a level", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("fewer than 3 log messages within 10s")
		}
	}

	if err := quiet.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != "test://watched-resource" {
			t.Errorf("updated %q, want test://watched-resource", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated within 10s of subscribing")
	}
	if err := quiet.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
}

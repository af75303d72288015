// Command packaged is a Go agent host that ships an MCP server in its own
// binary and gives the model one narrow tool over it.
//
// The host builds a go-sdk server, weather, whose forecast tool takes any
// city, any number of days and any units. Switchboard connects it in
// memory, beside the servers the user configured, and the host declares a
// facade, lisbon_forecast, that fixes the city and the units and passes on
// only the number of days. Being exclusive, the facade is the only way to
// reach forecast. The program searches for the facade, calls it through the
// mcp tool, as a model would, and prints what the model would see.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "packaged:", err)
		os.Exit(1)
	}
}

type forecastArgs struct {
	City  string `json:"city" jsonschema:"the city"`
	Days  int    `json:"days" jsonschema:"how many days, 1 to 7"`
	Units string `json:"units" jsonschema:"metric or imperial"`
}

// forecast is the packaged server's tool: a made-up forecast, the same
// every time.
func forecast(_ context.Context, _ *mcp.CallToolRequest, a forecastArgs) (*mcp.CallToolResult, any, error) {
	if a.Days < 1 || a.Days > 7 {
		return nil, nil, fmt.Errorf("days must be 1 to 7, not %d", a.Days)
	}
	var temps []string
	for i := range a.Days {
		c := 19 + i%3
		if a.Units == "imperial" {
			temps = append(temps, fmt.Sprintf("%d°F", c*9/5+32))
		} else {
			temps = append(temps, fmt.Sprintf("%d°C", c))
		}
	}
	text := fmt.Sprintf("%s, next %d days: %s", a.City, a.Days, strings.Join(temps, ", "))
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

func run(ctx context.Context, w io.Writer) error {
	weather := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(weather, &mcp.Tool{Name: "forecast", Description: "Weather forecast for any city."}, forecast)

	cwd, _ := os.Getwd()
	cfg := config.Load(config.FromEnv(os.Getenv, cwd, runtime.GOOS)) // the user's own servers too
	eng, err := switchboard.New(ctx, cfg, &switchboard.Options{
		Servers: []host.Server{{Name: "weather", Server: weather, Revision: "1.0.0"}},
		Facades: []host.Facade{{
			Name:        "lisbon_forecast",
			Description: "Weather forecast for Lisbon, in °C.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"days":{"type":"integer","minimum":1,"maximum":7}},"required":["days"]}`),
			Server:      "weather", Tool: "forecast",
			Fixed:     map[string]any{"city": "Lisbon", "units": "metric"},
			Exclusive: true,
		}},
	})
	if err != nil {
		return err
	}
	defer eng.Close()

	fmt.Fprintf(w, "registered tool: %s\n", eng.Tool(ctx).Name)
	for _, req := range []string{
		`{"search":"weather forecast"}`,
		`{"tool":"weather_lisbon_forecast","args":{"days":3}}`,
		`{"tool":"forecast","server":"weather","args":{"city":"Oslo","days":1,"units":"metric"}}`,
	} {
		r := eng.Handle(ctx, json.RawMessage(req))
		fmt.Fprintf(w, "\n> %s\n%s\n", req, r.Text)
	}
	return nil
}

// Command all does nothing, with every package the switchboard command
// imports linked in: the library (the engine, its SQLite catalog, the
// Postgres store, OAuth, telemetry), the panel (bubbletea) and the agent
// hosts' configurations (TOML). What it lacks against switchboard is only
// the code that the command's own functions reach (bench -startup).
package main

import (
	_ "github.com/switchboard-mcp/switchboard"
	_ "github.com/switchboard-mcp/switchboard/config/hosts"
	_ "github.com/switchboard-mcp/switchboard/internal/panel"
)

func main() {}

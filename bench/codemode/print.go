package main

import (
	"fmt"
	"io"
	"time"
)

// printTable prints the measure as a Markdown table: per task, then the
// totals of the multi-step tasks and of all.
func printTable(w io.Writer, results []result, scriptTool int) {
	fmt.Fprintf(w, "tokens: %s; a route's tokens are the requests the model writes (tool name and arguments as JSON) and the result texts it reads, discovery included\n\n", encoding)
	fmt.Fprintln(w, "| task | calls | tool-calling tokens | script tokens | saved | round trips (tools → script) | wall ms (tools → script) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	var multi, all [2]tally
	for _, r := range results {
		kind := "multi"
		if r.task.single {
			kind = "single"
		} else {
			multi[0], multi[1] = add(multi[0], r.tools), add(multi[1], r.script)
		}
		all[0], all[1] = add(all[0], r.tools), add(all[1], r.script)
		fmt.Fprintf(w, "| %s (%s) | %s | %d | %d | %s | %d → %d | %s → %s |\n", r.task.name, r.task.what, kind,
			r.tools.tokens, r.script.tokens, saved(r.tools, r.script), r.tools.trips, r.script.trips, ms(r.tools.wall), ms(r.script.wall))
	}
	for _, t := range []struct {
		name string
		v    [2]tally
	}{{"total, multi-step tasks", multi}, {"total, all tasks", all}} {
		fmt.Fprintf(w, "| **%s** | | **%d** | **%d** | **%s** | %d → %d | %s → %s |\n", t.name,
			t.v[0].tokens, t.v[1].tokens, saved(t.v[0], t.v[1]), t.v[0].trips, t.v[1].trips, ms(t.v[0].wall), ms(t.v[1].wall))
	}
	fmt.Fprintf(w, "\nThe mcpScript tool's definition (name, description, input schema) costs %d tokens once per session, in the tool list, on top of the mcp tool's.\n", scriptTool)
}

func add(a, b tally) tally {
	return tally{tokens: a.tokens + b.tokens, trips: a.trips + b.trips, wall: a.wall + b.wall}
}

// saved is how many fewer tokens the script route took, in percent;
// negative when it took more.
func saved(tools, script tally) string {
	return fmt.Sprintf("%.0f%%", 100*float64(tools.tokens-script.tokens)/float64(tools.tokens))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }

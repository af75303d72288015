package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun runs an evaluation over a real catalog of two tools and checks the
// run file it writes: the weather query finds the weather tool first.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cat := write("catalog.jsonl", `{"server":"weather","name":"get_forecast","description":"Get the weather forecast for a city","inputSchema":{"type":"object"}}
{"server":"files","name":"read_file","description":"Read a file from disk","inputSchema":{"type":"object"}}
`)
	qs := write("queries.jsonl", `{"id":"q1","query":"will it rain in Lisbon tomorrow"}`+"\n")
	out := filepath.Join(dir, "run.jsonl")
	if err := run([]string{"-catalog", cat, "-queries", qs, "-out", out, "-k", "1"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID      string `json:"id"`
		Results []struct{ Server, Name string }
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("run file %q: %v", data, err)
	}
	if got.ID != "q1" || len(got.Results) != 1 || got.Results[0].Name != "get_forecast" {
		t.Errorf("got %s, want q1 with get_forecast alone", data)
	}
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs -catalog, -queries, -out"},
		{[]string{"-catalog", "a", "-queries", "b", "-out", "c", "-k", "0"}, "-k must be positive"},
		{[]string{"-catalog", "a", "-queries", "b", "-out", "c", "extra"}, "takes no arguments"},
	} {
		err := run(tc.args, io.Discard)
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if err := run([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run(-h) = %v, want flag.ErrHelp", err)
	}
}

package switchboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

var update = flag.Bool("update", false, "rewrite the answers of testdata/contract/*.txtar with what the engine gives now")

// TestContract keeps what agents see from the mcp tool as data: each
// testdata/contract/*.txtar is a transcript of requests to the tool and
// the answers, text and details (the structured content), that the engine
// gave. A change to what agents see is then a change to these files, and
// a reviewed diff: run go test -run TestContract -update to rewrite the
// answers, and read the diff.
//
// A transcript holds, in this order:
//   - config.json (optional, and again between requests to change it, as
//     a user who edits the file between two runs): the user's
//     configuration file. "$FIXTURE" in
//     it is the path of the fixture server (package testserver, with
//     SWITCHBOARD_TESTSERVER in its env), "$FIXTURE_ARGS" its arguments,
//     and "$NEEDS_AUTH" the URL of an HTTP server that answers every
//     request with 401 (a server that needs an OAuth login).
//   - server/NAME.json (any number): an in-memory server NAME (a packaged
//     server, host.Server) given as data: {"instructions", "tools": [MCP
//     tool definitions], "results": {tool: MCP CallToolResult}}. A tool
//     with no result answers with its arguments as JSON text.
//   - then request, text and details, in turn: a request (the tool's
//     arguments), the text the model sees and the details as indented
//     JSON. A server/NAME.json among them redefines NAME from there on:
//     the engine is closed and made again over the same home (catalog,
//     pins, state), as a server that changed between two runs.
//
// Paths under the test's home are written $HOME, the process's spill
// directory PROCESS, times <time>, and ages ("3s ago") <age> ago.
func TestContract(t *testing.T) {
	files, err := filepath.Glob("testdata/contract/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/contract")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	fixture, fargs, _ := testserver.Command(testserver.Good)
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="contract"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer auth.Close()
	servers := map[string]json.RawMessage{}
	var eng *switchboard.Engine
	closeEngine := func() {
		if eng != nil {
			eng.Close()
			eng = nil
		}
	}
	defer closeEngine()
	open := func() {
		closeEngine()
		var packaged []host.Server
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			packaged = append(packaged, host.Server{Name: name, Server: dataServer(t, name, servers[name]), Revision: string(servers[name])})
		}
		cfg := config.Load(config.Dirs{Home: home})
		if err := cfg.Err(); err != nil {
			t.Fatalf("%s: config.json: %v", file, err)
		}
		var err error
		eng, err = switchboard.New(t.Context(), cfg, &switchboard.Options{
			SpillDir: filepath.Join(home, "spill"), Servers: packaged,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out []txtar.File
	var req []byte
	changed := false
	for _, f := range ar.Files {
		switch {
		case f.Name == "config.json":
			d := config.Dirs{Home: home}
			data := strings.ReplaceAll(string(f.Data), `"$FIXTURE"`, mustJSON(fixture))
			data = strings.ReplaceAll(data, `"$FIXTURE_ARGS"`, mustJSON(fargs))
			data = strings.ReplaceAll(data, `"$NEEDS_AUTH"`, mustJSON(auth.URL+"/mcp"))
			if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d.UserFile(), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			closeEngine() // the next request opens one over the new file
		case strings.HasPrefix(f.Name, "server/"):
			servers[strings.TrimSuffix(strings.TrimPrefix(f.Name, "server/"), ".json")] = f.Data
			if eng != nil {
				open()
			}
		case f.Name == "request":
			if eng == nil {
				open()
			}
			req = f.Data
			r := eng.Handle(t.Context(), json.RawMessage(req))
			js, err := json.MarshalIndent(r.MCP().StructuredContent, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			text, details := normalize(home, r.Text), normalize(home, string(js)+"\n")
			text = strings.ReplaceAll(text, auth.URL, "$NEEDS_AUTH")
			details = strings.ReplaceAll(details, auth.URL, "$NEEDS_AUTH")
			out = append(out, f, txtar.File{Name: "text", Data: []byte(withNewline(text))}, txtar.File{Name: "details", Data: []byte(details)})
			continue
		case f.Name == "text" || f.Name == "details":
			want := out[len(out)-1]
			if f.Name == "text" {
				want = out[len(out)-2]
			}
			if !bytes.Equal(f.Data, want.Data) {
				changed = true
				if !*update {
					t.Errorf("%s of request %s:\ngot:\n%s\nwant:\n%s", f.Name, bytes.TrimSpace(req), want.Data, f.Data)
				}
			}
			continue
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
		out = append(out, f)
	}
	if *update && changed || *update && len(out) != len(ar.Files) {
		ar.Files = out
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if len(out) != len(ar.Files) {
		t.Errorf("%s: a request without its text and details (run with -update to write them)", file)
	}
}

// dataServer returns an in-memory server made from its description as
// data (see TestContract).
func dataServer(t *testing.T, name string, data []byte) *mcp.Server {
	var def struct {
		Instructions string                         `json:"instructions"`
		Tools        []*mcp.Tool                    `json:"tools"`
		Results      map[string]*mcp.CallToolResult `json:"results"`
		Resources    []struct {
			mcp.Resource
			Text string `json:"text"`
		} `json:"resources"`
		Prompts []struct {
			mcp.Prompt
			Text string `json:"text"` // the user message, with {{arg}} replaced by each argument
		} `json:"prompts"`
	}
	if err := json.Unmarshal(data, &def); err != nil {
		t.Fatalf("server/%s.json: %v", name, err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{Instructions: def.Instructions})
	for _, tool := range def.Tools {
		if tool.InputSchema == nil {
			tool.InputSchema = map[string]any{"type": "object"}
		}
		res := def.Results[tool.Name]
		s.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res != nil {
				return res, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	}
	for _, r := range def.Resources {
		text := r.Text
		s.AddResource(&r.Resource, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
	}
	for _, p := range def.Prompts {
		text := p.Text
		s.AddPrompt(&p.Prompt, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			msg := text
			for k, v := range req.Params.Arguments {
				msg = strings.ReplaceAll(msg, "{{"+k+"}}", v)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: msg}}}}, nil
		})
	}
	return s
}

var (
	timeRE  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	spillRE = regexp.MustCompile(`/spill/p\d+-\d+/`)
	agoRE   = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m|h) ago\b`)
)

// normalize replaces what differs between runs: the home directory, the
// process's spill directory and times.
func normalize(home, s string) string {
	s = strings.ReplaceAll(s, home, "$HOME")
	s = spillRE.ReplaceAllString(s, "/spill/PROCESS/")
	s = agoRE.ReplaceAllString(s, "<age> ago")
	return timeRE.ReplaceAllString(s, "<time>")
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

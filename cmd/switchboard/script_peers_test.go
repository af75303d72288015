package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// peerScript is a multi-step code-mode task over the three real npm
// servers: list a directory (filesystem), read every .go file in it and
// count its TODO lines, record each file as a memory entity and read the
// graph back (memory), and add the counts with get-sum (everything). Its
// answer is one line; every step's result stays in the script.
const peerScript = `const dir = %s;
const ls = await tools.call("list_directory", {path: dir}, {server: "fs"});
if (!ls.ok) throw new Error("list: " + ls.error.message);
const names = ls.data.content[0].text.split("\n")
  .filter(l => l.startsWith("[FILE] ") && l.endsWith(".go")).map(l => l.slice(7)).sort();
const reads = await Promise.all(names.map(n => tools.call("read_text_file", {path: dir + "/" + n}, {server: "fs"})));
const counts = reads.map((r, i) => {
  if (!r.ok) throw new Error(names[i] + ": " + r.error.message);
  return r.data.content[0].text.split("\n").filter(l => l.includes("TODO")).length;
});
const made = await tools.call("create_entities",
  {entities: names.map((n, i) => ({name: n, entityType: "gofile", observations: ["todos " + counts[i]]}))}, {server: "mem"});
if (!made.ok) throw new Error("create: " + made.error.message);
const graph = await tools.call("read_graph", {}, {server: "mem"});
if (!graph.ok) throw new Error("graph: " + graph.error.message);
const entities = JSON.parse(graph.data.content[0].text).entities.filter(e => e.entityType === "gofile");
let total = 0;
for (const c of counts) {
  const s = await tools.call("get-sum", {a: total, b: c}, {server: "ev"});
  if (!s.ok) throw new Error("sum: " + s.error.message);
  total = Number(s.data.content[0].text.match(/is (\d+)/)[1]);
}
console.log(entities.length, "entities");
return names.map((n, i) => n + "=" + counts[i]).join(" ") + " total=" + total`

// peerTree writes the task's tree: four .go files with 0 to 3 TODO lines
// and a file that is not Go. It returns the directory and the answer the
// script must give.
func peerTree(t *testing.T) (dir, want string) {
	t.Helper()
	dir = t.TempDir()
	var parts []string
	total := 0
	for i := range 4 {
		name := fmt.Sprintf("f%d.go", i)
		var b strings.Builder
		b.WriteString("package p\n")
		for j := range i {
			fmt.Fprintf(&b, "// TODO(%d): item %d\nfunc f%d_%d() {}\n", j, j, i, j)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, name+"="+strconv.Itoa(i))
		total += i
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("TODO not go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, strings.Join(parts, " ") + " total=" + strconv.Itoa(total) + "\nconsole:\n4 entities"
}

// peerServers is the configuration of the three npm servers: the
// filesystem server in dir, memory in a file of its own.
func peerServers(t *testing.T, dir string) map[string]any {
	p := mcptest.Peers(t)
	fs, mem, ev := p.Filesystem(dir), p.Memory(filepath.Join(t.TempDir(), "memory.jsonl")), p.Everything()
	def := func(c mcptest.Command) map[string]any {
		return map[string]any{"command": c.Path, "args": c.Args, "env": commandEnv(c)}
	}
	return map[string]any{"fs": def(fs), "mem": def(mem), "ev": def(ev)}
}

// TestServeScriptPeers runs the multi-step script through switchboard
// serve, the real binary, over stdio and over Streamable HTTP, against the
// real filesystem, memory and everything servers: one mcpScript call
// answers the task.
func TestServeScriptPeers(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	connect := map[string]func(t *testing.T, home string) *mcp.ClientSession{
		"stdio": func(t *testing.T, home string) *mcp.ClientSession {
			_, cs := serveStdio(t, home, mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil))
			return cs
		},
		"http": func(t *testing.T, home string) *mcp.ClientSession {
			endpoint := startHTTP(t, switchboardCmd(t, home, "serve", "--http", "127.0.0.1:0"))
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		},
	}
	for name, open := range connect {
		t.Run(name, func(t *testing.T) {
			dir, want := peerTree(t)
			home := serveHome(t, peerServers(t, dir), map[string]any{"scriptMode": true})
			cs := open(t, home)
			script := fmt.Sprintf(peerScript, strconv.Quote(dir))
			got, isErr := callText(t, cs, "mcpScript", map[string]any{"script": script})
			if isErr || got != want {
				t.Errorf("got %q (error %v), want %q", got, isErr, want)
			}
		})
	}
}

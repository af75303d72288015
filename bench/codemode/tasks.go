package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// taskEnv is what a task's prompt would tell the model: where the tree
// is, and today's date.
type taskEnv struct {
	dir   string // the tree, as the filesystem server names it
	today string // as get_file_info prints dates: "Sun Dec 06 2026"
}

// A task is one job done two ways. discovery is what the agent asks the
// mcp tool first on either route (search with schemas); tools is the
// tool-calling route, which reads each result as the model would; script
// is the code-mode route's program. Both return the task's answer.
type task struct {
	name      string
	what      string
	single    bool // one tool call on the tool-calling route
	discovery []map[string]any
	tools     func(ctx context.Context, a *agent, e taskEnv) (string, error)
	script    func(e taskEnv) string
}

// search is the discovery request of the needs named.
func search(needs ...string) []map[string]any {
	return []map[string]any{{"search": needs, "includeSchemas": true}}
}

// prelude gives the script the task's root and today's date, as the
// model would write them from its prompt.
func prelude(e taskEnv) string {
	return fmt.Sprintf("const root = %q, today = %q;\n", e.dir, e.today)
}

// jsHelpers is what a model writes at the top of most scripts: a call
// that throws on failure and returns the text.
const jsHelpers = `const text = async (tool, args, server) => {
  const r = await tools.call(tool, args, {server});
  if (!r.ok) throw new Error(tool + ": " + r.error.message);
  return r.data.content[0].text;
};
const files = t => t.split("\n").filter(l => l.startsWith("[FILE] ")).map(l => l.slice(7).trim());
`

// files parses a list_directory answer.
func files(listing string) []string {
	var out []string
	for _, l := range strings.Split(listing, "\n") {
		if name, ok := strings.CutPrefix(l, "[FILE] "); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}

// list lists dir's files on the tool-calling route.
func list(ctx context.Context, a *agent, dir string) ([]string, error) {
	t, err := a.tool(ctx, "fs", "list_directory", map[string]any{"path": dir})
	return files(t), err
}

// read reads a file on the tool-calling route.
func read(ctx context.Context, a *agent, file string) (string, error) {
	return a.tool(ctx, "fs", "read_text_file", map[string]any{"path": file})
}

func countLines(text, sub string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

func tasks() []task {
	return []task{
		todos(), httpImports(), largest(), todaySizes(), guideHeads(), deadlines(), errorsPerLog(),
		docWords(), peopleSummary(), createRelate(), archiveOld(), todoOwners(), teamEmails(),
		singleSum(), singleHead(),
	}
}

func todos() task {
	return task{
		name: "todos", what: "count the TODO lines in every .go file of src/",
		discovery: search("list directory", "read file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/src")
			if err != nil {
				return "", err
			}
			var parts []string
			total := 0
			for _, n := range names {
				if !strings.HasSuffix(n, ".go") {
					continue
				}
				t, err := read(ctx, a, e.dir+"/src/"+n)
				if err != nil {
					return "", err
				}
				c := countLines(t, "TODO")
				total += c
				parts = append(parts, fmt.Sprintf("%s=%d", n, c))
			}
			return fmt.Sprintf("%d TODO lines: %s", total, strings.Join(parts, " ")), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const names = files(await text("list_directory", {path: root + "/src"}, "fs")).filter(n => n.endsWith(".go"));
const counts = await Promise.all(names.map(async n =>
  (await text("read_text_file", {path: root + "/src/" + n}, "fs")).split("\n").filter(l => l.includes("TODO")).length));
return counts.reduce((a, b) => a + b, 0) + " TODO lines: " + names.map((n, i) => n + "=" + counts[i]).join(" ");`
		},
	}
}

func httpImports() task {
	return task{
		name: "http-imports", what: `list the .go files of src/ that import "net/http"`,
		discovery: search("list directory", "read file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/src")
			if err != nil {
				return "", err
			}
			var out []string
			for _, n := range names {
				t, err := read(ctx, a, e.dir+"/src/"+n)
				if err != nil {
					return "", err
				}
				if strings.Contains(t, `"net/http"`) {
					out = append(out, n)
				}
			}
			return strings.Join(out, ", "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const names = files(await text("list_directory", {path: root + "/src"}, "fs"));
const texts = await Promise.all(names.map(n => text("read_text_file", {path: root + "/src/" + n}, "fs")));
return names.filter((n, i) => texts[i].includes('"net/http"')).join(", ");`
		},
	}
}

var sizeLine = regexp.MustCompile(`^\[FILE\] (\S+)\s+([\d.]+) (B|KB|MB)$`)

func largest() task {
	dirs := []string{"src", "docs", "logs", "notes"}
	return task{
		name: "largest", what: "find the largest file in src/, docs/, logs/ and notes/",
		discovery: search("list directory with sizes"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			best, bestKB := "", -1.0
			for _, d := range dirs {
				t, err := a.tool(ctx, "fs", "list_directory_with_sizes", map[string]any{"path": e.dir + "/" + d, "sortBy": "size"})
				if err != nil {
					return "", err
				}
				for _, l := range strings.Split(t, "\n") {
					m := sizeLine.FindStringSubmatch(strings.TrimSpace(l))
					if m == nil {
						continue
					}
					kb, _ := strconv.ParseFloat(m[2], 64)
					kb *= map[string]float64{"B": 1.0 / 1024, "KB": 1, "MB": 1024}[m[3]]
					if kb > bestKB {
						best, bestKB = d+"/"+m[1], kb
					}
				}
			}
			return best, nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `let best = "", bestKB = -1;
for (const d of ["src", "docs", "logs", "notes"]) {
  for (const l of (await text("list_directory_with_sizes", {path: root + "/" + d, sortBy: "size"}, "fs")).split("\n")) {
    const m = l.trim().match(/^\[FILE\] (\S+)\s+([\d.]+) (B|KB|MB)$/);
    if (!m) continue;
    const kb = Number(m[2]) * {B: 1 / 1024, KB: 1, MB: 1024}[m[3]];
    if (kb > bestKB) { best = d + "/" + m[1]; bestKB = kb; }
  }
}
return best;`
		},
	}
}

// fileInfo parses get_file_info's size and modified lines.
func fileInfo(t string) (size int, modified string) {
	for _, l := range strings.Split(t, "\n") {
		if v, ok := strings.CutPrefix(l, "size: "); ok {
			size, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "modified: "); ok {
			modified = v
		}
	}
	return size, modified
}

func todaySizes() task {
	return task{
		name: "today-sizes", what: "sum the sizes of the files in logs/ modified today",
		discovery: search("list directory", "file info size modified"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/logs")
			if err != nil {
				return "", err
			}
			n, sum := 0, 0
			for _, name := range names {
				t, err := a.tool(ctx, "fs", "get_file_info", map[string]any{"path": e.dir + "/logs/" + name})
				if err != nil {
					return "", err
				}
				if size, mod := fileInfo(t); strings.HasPrefix(mod, e.today) {
					n, sum = n+1, sum+size
				}
			}
			return fmt.Sprintf("%d files, %d bytes", n, sum), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `let n = 0, sum = 0;
for (const name of files(await text("list_directory", {path: root + "/logs"}, "fs"))) {
  const info = await text("get_file_info", {path: root + "/logs/" + name}, "fs");
  const size = Number(info.match(/^size: (\d+)$/m)[1]);
  if (info.match(/^modified: (.*)$/m)[1].startsWith(today)) { n++; sum += size; }
}
return n + " files, " + sum + " bytes";`
		},
	}
}

func guideHeads() task {
	return task{
		name: "guide-heads", what: "find the files named guide-* and read their first lines",
		discovery: search("search files by name", "read file head"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			t, err := a.tool(ctx, "fs", "search_files", map[string]any{"path": e.dir, "pattern": "**/guide-*"})
			if err != nil {
				return "", err
			}
			var out []string
			for _, p := range strings.Split(strings.TrimSpace(t), "\n") {
				h, err := a.tool(ctx, "fs", "read_text_file", map[string]any{"path": p, "head": 1})
				if err != nil {
					return "", err
				}
				out = append(out, path.Base(p)+": "+strings.TrimSpace(h))
			}
			slices.Sort(out)
			return strings.Join(out, "; "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const paths = (await text("search_files", {path: root, pattern: "**/guide-*"}, "fs")).trim().split("\n");
const out = [];
for (const p of paths) out.push(p.split("/").pop() + ": " + (await text("read_text_file", {path: p, head: 1}, "fs")).trim());
return out.sort().join("; ");`
		},
	}
}

var deadline = regexp.MustCompile(`deadline (\d{4}-\d\d-\d\d)`)

func deadlines() task {
	return task{
		name: "deadlines", what: "list the meeting notes that mention a deadline, with its dates",
		discovery: search("list directory", "read file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/notes")
			if err != nil {
				return "", err
			}
			var out []string
			for _, n := range names {
				t, err := read(ctx, a, e.dir+"/notes/"+n)
				if err != nil {
					return "", err
				}
				var dates []string
				for _, m := range deadline.FindAllStringSubmatch(t, -1) {
					dates = append(dates, m[1])
				}
				if dates != nil {
					out = append(out, n+": "+strings.Join(dates, ","))
				}
			}
			return strings.Join(out, "; "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const out = [];
for (const n of files(await text("list_directory", {path: root + "/notes"}, "fs"))) {
  const dates = [...(await text("read_text_file", {path: root + "/notes/" + n}, "fs")).matchAll(/deadline (\d{4}-\d\d-\d\d)/g)].map(m => m[1]);
  if (dates.length) out.push(n + ": " + dates.join(","));
}
return out.join("; ");`
		},
	}
}

func errorsPerLog() task {
	return task{
		name: "errors-per-log", what: "count the ERROR lines of each file in logs/ and name the worst",
		discovery: search("list directory", "read file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/logs")
			if err != nil {
				return "", err
			}
			var parts []string
			worst, most := "", -1
			for _, n := range names {
				t, err := read(ctx, a, e.dir+"/logs/"+n)
				if err != nil {
					return "", err
				}
				c := countLines(t, " ERROR ")
				parts = append(parts, fmt.Sprintf("%s=%d", n, c))
				if c > most {
					worst, most = n, c
				}
			}
			return "worst " + worst + ": " + strings.Join(parts, " "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const names = files(await text("list_directory", {path: root + "/logs"}, "fs"));
const counts = await Promise.all(names.map(async n =>
  (await text("read_text_file", {path: root + "/logs/" + n}, "fs")).split("\n").filter(l => l.includes(" ERROR ")).length));
let w = 0;
counts.forEach((c, i) => { if (c > counts[w]) w = i; });
return "worst " + names[w] + ": " + names.map((n, i) => n + "=" + counts[i]).join(" ");`
		},
	}
}

func docWords() task {
	return task{
		name: "doc-words", what: "count the words of every .md file in docs/",
		discovery: search("list directory", "read file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/docs")
			if err != nil {
				return "", err
			}
			total := 0
			for _, n := range names {
				t, err := read(ctx, a, e.dir+"/docs/"+n)
				if err != nil {
					return "", err
				}
				total += len(strings.Fields(t))
			}
			return fmt.Sprintf("%d words in %d files", total, len(names)), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const names = files(await text("list_directory", {path: root + "/docs"}, "fs"));
let total = 0;
for (const n of names) total += (await text("read_text_file", {path: root + "/docs/" + n}, "fs")).split(/\s+/).filter(w => w).length;
return total + " words in " + names.length + " files";`
		},
	}
}

// graph is server-memory's answer to read_graph.
type graph struct {
	Entities []struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	} `json:"entities"`
	Relations []struct {
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	} `json:"relations"`
}

func readGraph(ctx context.Context, a *agent, tool string, args map[string]any) (graph, error) {
	var g graph
	t, err := a.tool(ctx, "mem", tool, args)
	if err != nil {
		return g, err
	}
	return g, json.Unmarshal([]byte(t), &g)
}

func peopleSummary() task {
	return task{
		name: "people-summary", what: "copy every memory entity of type person into people.md",
		discovery: search("read knowledge graph", "write file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			g, err := readGraph(ctx, a, "read_graph", map[string]any{})
			if err != nil {
				return "", err
			}
			var b strings.Builder
			n := 0
			for _, x := range g.Entities {
				if x.EntityType == "person" {
					n++
					fmt.Fprintf(&b, "- %s: %s\n", x.Name, strings.Join(x.Observations, "; "))
				}
			}
			if _, err := a.tool(ctx, "fs", "write_file", map[string]any{"path": e.dir + "/people.md", "content": b.String()}); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %d people to people.md (%d bytes)", n, b.Len()), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const g = JSON.parse(await text("read_graph", {}, "mem"));
const people = g.entities.filter(x => x.entityType === "person");
const content = people.map(x => "- " + x.name + ": " + x.observations.join("; ") + "\n").join("");
await text("write_file", {path: root + "/people.md", content}, "fs");
return "wrote " + people.length + " people to people.md (" + content.length + " bytes)";`
		},
	}
}

func createRelate() task {
	const n = 8
	return task{
		name: "create-relate", what: "create 8 task entities and assign them in turn to the Platform team's members",
		discovery: search("search nodes", "create entities", "create relations"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			g, err := readGraph(ctx, a, "search_nodes", map[string]any{"query": "works in Platform"})
			if err != nil {
				return "", err
			}
			var members []string
			for _, x := range g.Entities {
				if x.EntityType == "person" {
					members = append(members, x.Name)
				}
			}
			var ents, rels []map[string]any
			var out []string
			for i := range n {
				name := fmt.Sprintf("Task %d", i+1)
				who := members[i%len(members)]
				ents = append(ents, map[string]any{"name": name, "entityType": "task", "observations": []string{"open"}})
				rels = append(rels, map[string]any{"from": who, "to": name, "relationType": "assigned"})
				out = append(out, name+"→"+who)
			}
			if _, err := a.tool(ctx, "mem", "create_entities", map[string]any{"entities": ents}); err != nil {
				return "", err
			}
			if _, err := a.tool(ctx, "mem", "create_relations", map[string]any{"relations": rels}); err != nil {
				return "", err
			}
			return strings.Join(out, ", "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const g = JSON.parse(await text("search_nodes", {query: "works in Platform"}, "mem"));
const members = g.entities.filter(x => x.entityType === "person").map(x => x.name);
const ts = Array.from({length: 8}, (_, i) => ({name: "Task " + (i + 1), who: members[i % members.length]}));
await text("create_entities", {entities: ts.map(t => ({name: t.name, entityType: "task", observations: ["open"]}))}, "mem");
await text("create_relations", {relations: ts.map(t => ({from: t.who, to: t.name, relationType: "assigned"}))}, "mem");
return ts.map(t => t.name + "→" + t.who).join(", ");`
		},
	}
}

func archiveOld() task {
	return task{
		name: "archive-old", what: "move the files of logs/ not modified today into logs/archive/",
		discovery: search("list directory", "file info modified", "create directory", "move file"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/logs")
			if err != nil {
				return "", err
			}
			var old []string
			for _, n := range names {
				t, err := a.tool(ctx, "fs", "get_file_info", map[string]any{"path": e.dir + "/logs/" + n})
				if err != nil {
					return "", err
				}
				if _, mod := fileInfo(t); !strings.HasPrefix(mod, e.today) {
					old = append(old, n)
				}
			}
			if _, err := a.tool(ctx, "fs", "create_directory", map[string]any{"path": e.dir + "/logs/archive"}); err != nil {
				return "", err
			}
			for _, n := range old {
				if _, err := a.tool(ctx, "fs", "move_file", map[string]any{"source": e.dir + "/logs/" + n, "destination": e.dir + "/logs/archive/" + n}); err != nil {
					return "", err
				}
			}
			return "moved " + strings.Join(old, ", "), nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const old = [];
for (const n of files(await text("list_directory", {path: root + "/logs"}, "fs"))) {
  const info = await text("get_file_info", {path: root + "/logs/" + n}, "fs");
  if (!info.match(/^modified: (.*)$/m)[1].startsWith(today)) old.push(n);
}
await text("create_directory", {path: root + "/logs/archive"}, "fs");
for (const n of old) await text("move_file", {source: root + "/logs/" + n, destination: root + "/logs/archive/" + n}, "fs");
return "moved " + old.join(", ");`
		},
	}
}

var owner = regexp.MustCompile(`TODO\((\w+)\)`)

func todoOwners() task {
	return task{
		name: "todo-owners", what: "find who owns the most TODO(name) lines in src/ and note it in memory",
		discovery: search("list directory", "read file", "add observations"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			names, err := list(ctx, a, e.dir+"/src")
			if err != nil {
				return "", err
			}
			count := map[string]int{}
			for _, n := range names {
				t, err := read(ctx, a, e.dir+"/src/"+n)
				if err != nil {
					return "", err
				}
				for _, m := range owner.FindAllStringSubmatch(t, -1) {
					count[m[1]]++
				}
			}
			top := ""
			for who, c := range count {
				if c > count[top] || c == count[top] && who < top {
					top = who
				}
			}
			g, err := readGraph(ctx, a, "search_nodes", map[string]any{"query": top})
			if err != nil {
				return "", err
			}
			full := g.Entities[0].Name
			obs := fmt.Sprintf("owns %d TODOs in src", count[top])
			if _, err := a.tool(ctx, "mem", "add_observations", map[string]any{"observations": []map[string]any{{"entityName": full, "contents": []string{obs}}}}); err != nil {
				return "", err
			}
			return full + ": " + obs, nil
		},
		script: func(e taskEnv) string {
			return prelude(e) + jsHelpers + `const count = {};
for (const n of files(await text("list_directory", {path: root + "/src"}, "fs")))
  for (const m of (await text("read_text_file", {path: root + "/src/" + n}, "fs")).matchAll(/TODO\((\w+)\)/g))
    count[m[1]] = (count[m[1]] || 0) + 1;
const top = Object.keys(count).sort().reduce((a, b) => count[b] > count[a] ? b : a);
const full = JSON.parse(await text("search_nodes", {query: top}, "mem")).entities[0].name;
const obs = "owns " + count[top] + " TODOs in src";
await text("add_observations", {observations: [{entityName: full, contents: [obs]}]}, "mem");
return full + ": " + obs;`
		},
	}
}

func teamEmails() task {
	return task{
		name: "project-emails", what: "the emails of everyone who works on project Beacon",
		single:    true,
		discovery: search("read knowledge graph"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			g, err := readGraph(ctx, a, "read_graph", map[string]any{})
			if err != nil {
				return "", err
			}
			var out []string
			for _, r := range g.Relations {
				if r.To != "Beacon" || r.RelationType != "works_on" {
					continue
				}
				for _, x := range g.Entities {
					if x.Name != r.From {
						continue
					}
					for _, o := range x.Observations {
						if v, ok := strings.CutPrefix(o, "email "); ok {
							out = append(out, v)
						}
					}
				}
			}
			slices.Sort(out)
			return strings.Join(out, ", "), nil
		},
		script: func(e taskEnv) string {
			return jsHelpers + `const g = JSON.parse(await text("read_graph", {}, "mem"));
const who = new Set(g.relations.filter(r => r.to === "Beacon" && r.relationType === "works_on").map(r => r.from));
return g.entities.filter(x => who.has(x.name)).flatMap(x => x.observations.filter(o => o.startsWith("email ")).map(o => o.slice(6))).sort().join(", ");`
		},
	}
}

func singleSum() task {
	return task{
		name: "single-sum", what: "add 17 and 25 with get-sum", single: true,
		discovery: search("add two numbers"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			return a.tool(ctx, "ev", "get-sum", map[string]any{"a": 17, "b": 25})
		},
		script: func(e taskEnv) string {
			return `(await tools.call("get-sum", {a: 17, b: 25}, {server: "ev"})).data.content[0].text`
		},
	}
}

func singleHead() task {
	return task{
		name: "single-head", what: "read the first line of README.md", single: true,
		discovery: search("read file head"),
		tools: func(ctx context.Context, a *agent, e taskEnv) (string, error) {
			return a.tool(ctx, "fs", "read_text_file", map[string]any{"path": e.dir + "/README.md", "head": 1})
		},
		script: func(e taskEnv) string {
			return prelude(e) + `(await tools.call("read_text_file", {path: root + "/README.md", head: 1}, {server: "fs"})).data.content[0].text`
		},
	}
}

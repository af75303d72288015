package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The fixture is the same on every run: a project tree with Go sources,
// docs, logs (some modified today, some ten days ago) and meeting notes,
// and a memory graph of people, projects and teams.

var goFiles = []string{"main.go", "server.go", "client.go", "store.go", "cache.go", "auth.go", "metrics.go", "config.go"}
var docFiles = []string{"guide-install.md", "guide-config.md", "guide-deploy.md", "api.md", "changelog.md", "faq.md"}
var logFiles = []string{"app-1.log", "app-2.log", "app-3.log", "worker-1.log", "worker-2.log", "access.log"}
var noteFiles = []string{"2026-11-02.txt", "2026-11-09.txt", "2026-11-16.txt", "2026-11-23.txt", "2026-11-30.txt", "2026-12-04.txt"}

var people = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson", "Dennis Ritchie", "Margaret Hamilton", "Donald Knuth", "Frances Allen"}
var projects = []string{"Switchboard", "Atlas", "Beacon", "Cobalt"}
var teams = []string{"Platform", "Tools", "Research"}

var words = strings.Fields(`the a server client request answer call tool cache store index search
	result session token config deploy install guide error retry timeout queue worker log metric
	trace span user admin policy approval audit file path read write list directory memory graph`)

// sentence is n words of r.
func sentence(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[r.IntN(len(words))]
	}
	return strings.Join(w, " ")
}

// writeFixture makes the tree in dir/tree and the memory graph in
// dir/memory.jsonl, removing what was there.
func writeFixture(dir string) error {
	tree := filepath.Join(dir, "tree")
	if err := os.RemoveAll(tree); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(31, 2026))
	files := map[string]string{"README.md": "# Demo project\n\nA tree for the code-mode benchmark.\n"}
	for i, name := range goFiles {
		var b strings.Builder
		b.WriteString("package demo\n\nimport (\n\t\"context\"\n")
		if i%3 != 1 {
			b.WriteString("\t\"net/http\"\n")
		}
		b.WriteString(")\n\n")
		for f := range 4 + r.IntN(6) {
			if r.IntN(3) == 0 {
				fmt.Fprintf(&b, "// TODO(%s): %s\n", strings.Fields(people[r.IntN(len(people))])[0], sentence(r, 6))
			}
			fmt.Fprintf(&b, "// fn%d does %s.\nfunc fn%d(ctx context.Context) error {\n", f, sentence(r, 8), f)
			for range 2 + r.IntN(5) {
				if r.IntN(8) == 0 {
					fmt.Fprintf(&b, "\t// TODO: %s\n", sentence(r, 5))
				}
				fmt.Fprintf(&b, "\t_ = %q\n", sentence(r, 4))
			}
			b.WriteString("\treturn nil\n}\n\n")
		}
		files["src/"+name] = b.String()
	}
	for _, name := range docFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n", strings.TrimSuffix(name, ".md"))
		for range 8 + r.IntN(20) {
			b.WriteString(sentence(r, 6+r.IntN(10)) + ".\n")
		}
		files["docs/"+name] = b.String()
	}
	for i, name := range logFiles {
		var b strings.Builder
		for j := range 20 + r.IntN(60) {
			level := []string{"INFO", "INFO", "INFO", "WARN", "ERROR"}[r.IntN(5)]
			fmt.Fprintf(&b, "2026-12-0%d 10:%02d:%02d %s %s\n", 1+i%5, j%60, r.IntN(60), level, sentence(r, 7))
		}
		files["logs/"+name] = b.String()
	}
	for _, name := range noteFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "Meeting %s\nAttendees: %s, %s\n\n", strings.TrimSuffix(name, ".txt"), people[r.IntN(len(people))], people[r.IntN(len(people))])
		for range 5 + r.IntN(8) {
			line := "- " + sentence(r, 9)
			if r.IntN(6) == 0 {
				line += "; deadline " + fmt.Sprintf("2026-12-%02d", 10+r.IntN(15))
			}
			b.WriteString(line + "\n")
		}
		files["notes/"+name] = b.String()
	}
	for name, text := range files {
		path := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	// Half the logs were modified today, the others ten days ago.
	old := time.Now().AddDate(0, 0, -10)
	for i, name := range logFiles {
		if i%2 == 1 {
			if err := os.Chtimes(filepath.Join(tree, "logs", name), old, old); err != nil {
				return err
			}
		}
	}
	return writeMemory(filepath.Join(dir, "memory.jsonl"), r)
}

// writeMemory writes server-memory's file: one JSON object a line.
func writeMemory(path string, r *rand.Rand) error {
	var lines []string
	add := func(v map[string]any) {
		b, _ := json.Marshal(v)
		lines = append(lines, string(b))
	}
	for i, p := range people {
		add(map[string]any{"type": "entity", "name": p, "entityType": "person", "observations": []string{
			fmt.Sprintf("works in %s", teams[i%len(teams)]),
			fmt.Sprintf("email %s@example.com", strings.ToLower(strings.Fields(p)[1])),
			sentence(r, 8),
		}})
	}
	for _, p := range projects {
		add(map[string]any{"type": "entity", "name": p, "entityType": "project", "observations": []string{sentence(r, 10), sentence(r, 6)}})
	}
	for _, t := range teams {
		add(map[string]any{"type": "entity", "name": t, "entityType": "team", "observations": []string{sentence(r, 8)}})
	}
	for i, p := range people {
		add(map[string]any{"type": "relation", "from": p, "to": teams[i%len(teams)], "relationType": "member_of"})
		add(map[string]any{"type": "relation", "from": p, "to": projects[r.IntN(len(projects))], "relationType": "works_on"})
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

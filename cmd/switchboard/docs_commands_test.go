package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docCommand is one "switchboard VERB …" the docs tell a reader to run.
type docCommand struct {
	where string   // file:line
	verb  string   // the word after switchboard
	sub   string   // the word after the verb, if it is a plain word
	flags []string // the --flags named on the line, before a lone "--"
}

var (
	// docVerb finds "switchboard VERB"; docAt says whether the text before
	// it puts it where a command is: at the start (after a prompt or
	// variable assignments), after a pipe, ";", "&&", "$(" or exec, or as
	// go run ./cmd/switchboard.
	docVerb = regexp.MustCompile(`(?:^|[\s($/])switchboard[ \t]+([a-z_][a-z0-9_-]*)`)
	docAt   = regexp.MustCompile(`(?:^\s*(?:\$\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*|(?:\||;|&&|\$\(|\bexec|\bsudo)\s*|\bgo run \./cmd/)$`)
	docFlag = regexp.MustCompile(`(?:^|\s|\[)(--[a-z][a-z0-9-]*)`)
	docSub  = regexp.MustCompile(`^[ \t]+([a-z][a-z0-9-]*)\b`)
)

// docCommands returns the commands named in a markdown file: on the lines
// of its fenced code blocks (but those marked as output or another
// language: text, go, json, jsonc, sql), without their shell comments, and
// in its inline code spans.
func docCommands(name, text string) []docCommand {
	var out []docCommand
	fenced, skip := false, false
	for i, line := range strings.Split(text, "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			fenced = !fenced
			skip = fenced && slices.Contains([]string{"text", "go", "json", "jsonc", "sql"}, fence)
			continue
		}
		if skip {
			continue
		}
		if fenced {
			if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
				line = line[:i]
			}
		}
		frags := []string{line}
		if !fenced {
			frags = nil
			parts := strings.Split(line, "`")
			for j := 1; j < len(parts); j += 2 {
				frags = append(frags, parts[j])
			}
		}
		for _, f := range frags {
			out = append(out, fragmentCommands(name+":"+strconv.Itoa(i+1), f)...)
		}
	}
	return out
}

// fragmentCommands returns each command of one line of code or code span.
// A command's words end at a pipe, ";", "&&", "#" or another switchboard.
func fragmentCommands(where, f string) []docCommand {
	var out []docCommand
	locs := docVerb.FindAllStringSubmatchIndex(f, -1)
	for k, loc := range locs {
		name := loc[0]
		if f[name] != 's' {
			name++ // the character before switchboard
		}
		if !docAt.MatchString(f[:name]) {
			continue
		}
		end := len(f)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		rest := f[loc[1]:end]
		for _, stop := range []string{"|", ";", "&&", " #", " -- "} {
			if i := strings.Index(rest, stop); i >= 0 {
				rest = rest[:i]
			}
		}
		c := docCommand{where: where, verb: f[loc[2]:loc[3]]}
		if m := docSub.FindStringSubmatch(rest); m != nil {
			c.sub = m[1]
		}
		for _, m := range docFlag.FindAllStringSubmatch(rest, -1) {
			c.flags = append(c.flags, m[1])
		}
		out = append(out, c)
	}
	return out
}

// TestDocsNameRealCommands runs every "switchboard VERB …" of README.md
// and docs/*.md through the real binary: VERB --help must succeed (the
// command exists), and each --flag named with it must be one of the
// command's flags, as completion lists them, or named in its help (issue
// 30: docs/search.md told readers to run a command that was gone).
func TestDocsNameRealCommands(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	var cmds []docCommand
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, docCommands(strings.TrimPrefix(file, "../../"), string(data))...)
	}
	if len(cmds) < 100 {
		t.Fatalf("found %d commands in the docs, want the hundreds there are: the extraction is broken", len(cmds))
	}
	home := t.TempDir()
	flagsOf := map[string][]string{} // verb or "verb sub" → the flags it takes
	known := func(verb, sub string) ([]string, bool) {
		key := strings.TrimSpace(verb + " " + sub)
		if fs, ok := flagsOf[key]; ok {
			return fs, fs != nil
		}
		args := []string{verb}
		if sub != "" {
			args = append(args, sub)
		}
		help, err := switchboardCmd(t, home, append(args, "--help")...).Output()
		if err != nil {
			flagsOf[key] = nil
			return nil, false
		}
		fs := []string{"--help"}
		for _, m := range docFlag.FindAllStringSubmatch(string(help), -1) {
			fs = append(fs, m[1])
		}
		comp, _ := switchboardCmd(t, home, "__complete", verb, "-").Output()
		fs = append(fs, strings.Fields(string(comp))...)
		flagsOf[key] = fs
		return fs, true
	}
	for _, c := range cmds {
		if c.verb == "help" || c.verb == "mcp" {
			continue // help is checked by TestScripts/help; "switchboard mcp" names the tool
		}
		flags, ok := known(c.verb, "")
		if !ok {
			t.Errorf("%s: switchboard %s: not a command (switchboard %s --help fails)", c.where, c.verb, c.verb)
			continue
		}
		if c.sub != "" {
			if subFlags, ok := known(c.verb, c.sub); ok {
				flags = append(slices.Clone(flags), subFlags...)
			}
		}
		for _, f := range c.flags {
			if !slices.Contains(flags, f) {
				t.Errorf("%s: switchboard %s: no flag %s (switchboard %s --help names %v)", c.where, c.verb, f, c.verb, flags)
			}
		}
	}
}

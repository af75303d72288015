package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/switchboard-mcp/switchboard/config"
)

func statusCommand() *command {
	return &command{
		name:    "status",
		summary: "show configured servers, where they come from, and configuration problems",
		usage:   "[--json] [--config FILE]",
		help: `Lists every configured server with its transport, state and source file,
the project files that are ignored until trusted, and every configuration
error and warning. It never connects to a server and never resolves a secret.

States: enabled, disabled, invalid (this definition cannot be used),
blocked (the configuration has an error, so no server is usable).`,
		run: runStatus,
	}
}

// statusJSON is the stable --json shape of status.
type statusJSON struct {
	Servers  []serverJSON  `json:"servers"`
	Files    []fileJSON    `json:"files"`
	Project  *projectJSON  `json:"project,omitempty"`
	Errors   []problemJSON `json:"errors"`
	Warnings []problemJSON `json:"warnings"`
}

type serverJSON struct {
	Name       string `json:"name"`
	Transport  string `json:"transport"`
	Target     string `json:"target"`
	State      string `json:"state"`
	Source     string `json:"source"`
	SourceKind string `json:"sourceKind"`
	DisabledBy string `json:"disabledBy,omitempty"`
	Error      string `json:"error,omitempty"`
}

type fileJSON struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind"`
	Host    string   `json:"host,omitempty"`
	State   string   `json:"state"`
	Servers []string `json:"servers"`
}

type projectJSON struct {
	Dir     string   `json:"dir"`
	Files   []string `json:"files"`
	Trusted bool     `json:"trusted"`
	Changed bool     `json:"changed"`
}

type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

func runStatus(ctx context.Context, e *env, args []string) error {
	f := newFlags("status", true)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("status takes no arguments")
	}
	c := config.Load(e.dirs(f.config))
	st := statusOf(c)
	if f.json {
		return writeJSON(e.stdout, st)
	}
	printStatus(e, c, st)
	return nil
}

func serverState(c *config.Config, s *config.Server) string {
	switch {
	case c.Err() != nil:
		return "blocked"
	case s.Disabled:
		return "disabled"
	case s.Err != nil:
		return "invalid"
	}
	return "enabled"
}

func statusOf(c *config.Config) statusJSON {
	st := statusJSON{Servers: []serverJSON{}, Files: []fileJSON{}, Errors: problems(c.Errors()), Warnings: problems(c.Warnings())}
	for _, s := range c.Servers {
		sj := serverJSON{
			Name: s.Name, Transport: string(s.Type), Target: s.Target(), State: serverState(c, s),
			Source: s.Source.Path, SourceKind: string(s.Source.Kind), DisabledBy: s.DisabledBy,
		}
		if s.Err != nil {
			sj.Error = s.Err.Error()
		}
		st.Servers = append(st.Servers, sj)
	}
	for _, f := range c.Files {
		if f.State == config.FileMissing {
			continue
		}
		st.Files = append(st.Files, fileJSON{Path: f.Path, Kind: string(f.Kind), Host: f.Host, State: string(f.State), Servers: nonNil(f.Servers)})
	}
	if len(c.Project.Files) > 0 {
		st.Project = &projectJSON{Dir: c.Project.Dir, Files: c.Project.Files, Trusted: c.Project.Trusted, Changed: c.Project.Changed}
	}
	return st
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func problems(ps []config.Problem) []problemJSON {
	out := []problemJSON{}
	for _, p := range ps {
		out = append(out, problemJSON{File: p.File, Line: p.Line, Col: p.Col, Path: p.Path, Server: p.Server, Message: p.Message})
	}
	return out
}

func printStatus(e *env, c *config.Config, st statusJSON) {
	w := e.stdout
	if len(st.Servers) == 0 {
		fmt.Fprintln(w, "no servers configured")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tSOURCE\tTARGET")
		for _, s := range st.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Transport, s.State, e.pretty(s.Source), s.Target)
		}
		tw.Flush()
	}
	printIgnored(e, c)
	printProblems(e, w, "error", c.Errors())
	printProblems(e, w, "warning", nonIgnoredWarnings(c))
	if err := c.Err(); err != nil {
		fmt.Fprintln(w, "\nNo server is usable until the configuration error is fixed (hint: switchboard config validate).")
	}
}

// printIgnored explains the project files that do not count yet.
func printIgnored(e *env, c *config.Config) {
	p := c.Project
	if len(p.Files) == 0 || p.Trusted {
		return
	}
	why := "the project is not trusted"
	if p.Changed {
		why = "its definitions changed since you trusted it"
	}
	fmt.Fprintf(e.stdout, "\nIgnored project files (%s):\n", why)
	for _, f := range c.Files {
		if f.State != config.FileIgnored {
			continue
		}
		servers := "no servers"
		if len(f.Servers) > 0 {
			servers = "servers: " + strings.Join(f.Servers, ", ")
		}
		fmt.Fprintf(e.stdout, "  %s (%s)\n", e.pretty(f.Path), servers)
	}
	fmt.Fprintf(e.stdout, "hint: review them, then run switchboard trust in %s\n", e.pretty(p.Dir))
}

// nonIgnoredWarnings leaves out the "ignored" warnings printIgnored explains.
func nonIgnoredWarnings(c *config.Config) []config.Problem {
	var out []config.Problem
	for _, p := range c.Warnings() {
		if strings.HasPrefix(p.Message, "ignored: ") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func printProblems(e *env, w io.Writer, what string, ps []config.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%ss:\n", strings.ToUpper(what[:1])+what[1:])
	for _, p := range ps {
		fmt.Fprintf(w, "  %s\n", p.Error())
	}
}

package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
)

func setEmbedCommand() *command {
	return &command{
		name:    "set-embed",
		summary: "set or remove the embeddings endpoint of semantic search",
		usage:   "[--base-url URL] [--model M] [--api-key-ref '${VAR}'] [--dry-run] [--json]\n       switchboard set-embed --off [--dry-run] [--json]",
		help: `Writes settings.embeddings in the user-global configuration file: the
OpenAI-compatible /v1 endpoint whose embeddings make search hybrid (see
docs/search.md). Comments and formatting in the file are kept. A flag left
out keeps its current value; an empty value ('') removes the field. The
first set-embed needs --base-url.

The API key is written only as a reference, resolved when the endpoint is
called: --api-key-ref '${OPENAI_API_KEY}' (an environment variable) or
'${secret:NAME}' (a stored secret, see switchboard secret). A literal key
is refused and not written.

--off removes the section: search is lexical again. --dry-run prints the
change as a diff and writes nothing. Run switchboard index afterwards to
embed the catalog's tools.

With --json, prints {"action", "file", "embeddings"}: action is "set",
"removed" or "unchanged"; embeddings the section as written afterwards
(null when there is none), with the key as its reference.

` + flagHelp(setEmbedFlags()),
		run: runSetEmbed,
	}
}

// embedJSON is the stable --json shape of set-embed.
type embedJSON struct {
	Action     string          `json:"action"`
	File       string          `json:"file"`
	Embeddings *embeddingsJSON `json:"embeddings"`
}

type embeddingsJSON struct {
	BaseURL string `json:"baseUrl"`
	APIKey  string `json:"apiKey,omitempty"` // a reference, never a value
	Model   string `json:"model,omitempty"`
}

// setEmbedFlags returns set-embed's flag set; runSetEmbed reads the
// values by name.
func setEmbedFlags() *flags {
	f := newFlags("set-embed", true)
	f.String("base-url", "", "the endpoint's `URL`, e.g. http://127.0.0.1:11434/v1")
	f.String("model", "", "the embedding `model` to ask for")
	f.String("api-key-ref", "", "the API key as a `reference` such as ${OPENAI_API_KEY}")
	f.Bool("off", false, "remove settings.embeddings")
	f.Bool("dry-run", false, "print the change as a diff; write nothing")
	return f
}

func runSetEmbed(ctx context.Context, e *env, args []string) error {
	f := setEmbedFlags()
	pos, rest, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || rest != nil {
		return usagef("set-embed takes only flags")
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	off, dryRun := f.Lookup("off").Value.String() == "true", f.Lookup("dry-run").Value.String() == "true"
	var edits []config.FieldEdit
	for _, fl := range []struct{ flag, field string }{{"base-url", "baseUrl"}, {"model", "model"}, {"api-key-ref", "apiKey"}} {
		switch v := f.Lookup(fl.flag).Value.String(); {
		case !given[fl.flag]:
		case v == "":
			edits = append(edits, config.FieldEdit{Field: fl.field, Remove: true})
		default:
			edits = append(edits, config.FieldEdit{Field: fl.field, Value: v})
		}
	}
	switch {
	case off && len(edits) > 0:
		return usagef("--off removes the section: give it alone")
	case !off && len(edits) == 0:
		return usagef("give --base-url, --model or --api-key-ref to change, or --off")
	case dryRun && f.json:
		return usagef("--dry-run prints a diff: leave out --json")
	}
	d := e.dirs(f.config)
	ed, err := config.SetEmbeddings(d, config.ScopeGlobal, edits, off)
	if err != nil {
		return err
	}
	if dryRun {
		if !ed.Changed() {
			fmt.Fprintf(e.stderr, "no change to settings.embeddings in %s\n", e.pretty(ed.Path))
		}
		_, err := fmt.Fprint(e.stdout, ed.Diff())
		return err
	}
	if err := ed.Write(); err != nil {
		return err
	}
	return reportEmbed(e, d, ed, off, f.json)
}

func reportEmbed(e *env, d config.Dirs, ed *config.Edit, off, asJSON bool) error {
	out := embedJSON{Action: "set", File: ed.Path}
	switch {
	case !ed.Changed():
		out.Action = "unchanged"
	case off:
		out.Action = "removed"
	}
	if em := config.Load(d).Settings.Embeddings; em != nil {
		out.Embeddings = &embeddingsJSON{BaseURL: em.BaseURL, APIKey: em.APIKey, Model: em.Model}
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	switch out.Action {
	case "unchanged":
		fmt.Fprintf(e.stderr, "no change to settings.embeddings in %s\n", e.pretty(ed.Path))
	case "removed":
		fmt.Fprintf(e.stderr, "removed settings.embeddings from %s: search is lexical\n", e.pretty(ed.Path))
	default:
		fmt.Fprintf(e.stderr, "set settings.embeddings in %s\nhint: run switchboard index to embed the catalog's tools\n", e.pretty(ed.Path))
	}
	return nil
}

package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const changeBefore = `// mine
{
  "mcpServers": {
    "gh": {
      "command": "gh-server", // the binary
      "env": {
        "A": "1", // a
        "B": "2"
      }
    },
    "other": {"command": "o"}
  }
}
`

func TestChangeServer(t *testing.T) {
	tests := []struct {
		name  string
		edits []FieldEdit
		want  string // the file after; "" when the edit is refused
		err   string
	}{
		{"env key set, replaced and removed in place", []FieldEdit{
			{Field: "env", Key: "B", Value: "3"}, {Field: "env", Key: "C", Value: "${C}"}, {Field: "env", Key: "A", Remove: true},
		}, strings.Replace(changeBefore, `        "A": "1", // a
        "B": "2"
`, `        "B": "3",
        "C": "${C}"
`, 1), ""},
		{"the last env key takes the object with it", []FieldEdit{
			{Field: "env", Key: "A", Remove: true}, {Field: "env", Key: "B", Remove: true},
		}, strings.Replace(changeBefore, `, // the binary
      "env": {
        "A": "1", // a
        "B": "2"
      }
`, ` // the binary
`, 1), ""},
		{"a field replaced keeps its comment", []FieldEdit{{Field: "command", Value: "new"}},
			strings.Replace(changeBefore, `"gh-server"`, `"new"`, 1), ""},
		{"a bad value is refused, naming the field", []FieldEdit{{Field: "lifecycle", Value: "bogus"}},
			"", `mcpServers.gh.lifecycle: must be "lazy"`},
		{"a credential literal is refused", []FieldEdit{{Field: "env", Key: "API_TOKEN", Value: "sk-1234567890"}},
			"", `mcpServers.gh.env.API_TOKEN: API_TOKEN looks like a credential`},
		{"env that is not an object", []FieldEdit{{Field: "command", Key: "x", Value: "y"}},
			"", `mcpServers.gh.command is not an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, changeBefore)
			ed, err := ChangeServer(d, ScopeGlobal, "gh", tt.edits)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				if got := readString(t, p.user); got != changeBefore {
					t.Errorf("a refused edit changed the file:\n%s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readString(t, p.user); got != changeBefore {
				t.Fatalf("ChangeServer wrote before Write:\n%s", got)
			}
			if !strings.Contains(ed.Diff(), "+++ "+p.user) {
				t.Errorf("diff: got %q, want a unified diff of %s", ed.Diff(), p.user)
			}
			if err := ed.Write(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, readString(t, p.user)); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
			noErrors(t, Load(d))
		})
	}
}

func TestChangeServerUnknown(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, changeBefore)
	_, err := ChangeServer(d, ScopeGlobal, "nope", []FieldEdit{{Field: "command", Value: "x"}})
	if !errors.Is(err, ErrUnknownServer) {
		t.Errorf("got %v, want ErrUnknownServer", err)
	}
}

func TestSetEmbeddings(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, changeBefore)
	ed, err := SetEmbeddings(d, ScopeGlobal, []FieldEdit{{Field: "baseUrl", Value: "http://127.0.0.1:1/v1"}, {Field: "apiKey", Value: "${K}"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ed.Write(); err != nil {
		t.Fatal(err)
	}
	c := Load(d)
	noErrors(t, c)
	if got, want := c.Settings.Embeddings, (&Embeddings{BaseURL: "http://127.0.0.1:1/v1", APIKey: "${K}"}); !cmp.Equal(got, want) {
		t.Errorf("embeddings: got %+v, want %+v", got, want)
	}
	if _, err := SetEmbeddings(d, ScopeGlobal, []FieldEdit{{Field: "apiKey", Value: "literal-key"}}, false); err == nil || strings.Contains(err.Error(), "literal-key") {
		t.Errorf("a literal key: got %v, want an error that does not show it", err)
	}
	ed, err = SetEmbeddings(d, ScopeGlobal, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := ed.Write(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(changeBefore, readString(t, p.user)); diff != "" {
		t.Errorf("after --off, the file is not as it was (-want +got):\n%s", diff)
	}
}

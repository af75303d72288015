package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// docShape parses the field table under heading in a docs file: each row
// names one or more top-level fields (in backquotes) and, in its shape
// column, the keys of their objects (in double quotes). It returns the
// keys by field; a field whose shape names no keys maps to nil.
func docShape(t *testing.T, file, heading string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	names := regexp.MustCompile("`([a-zA-Z]+)`")
	keys := regexp.MustCompile(`"([a-zA-Z]+)"`)
	out := map[string][]string{}
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		cols := strings.Split(line, "|")
		if len(cols) < 4 || strings.HasPrefix(strings.TrimSpace(cols[1]), "---") || strings.TrimSpace(cols[1]) == "field" {
			continue
		}
		shape, _, _ := strings.Cut(cols[2], "`:") // the prose after the shape names no keys
		var ks []string
		for _, m := range keys.FindAllStringSubmatch(shape, -1) {
			ks = append(ks, m[1])
		}
		sort.Strings(ks)
		for _, m := range names.FindAllStringSubmatch(cols[1], -1) {
			out[m[1]] = ks
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no field table under %q", file, heading)
	}
	return out
}

// typeShape returns the JSON keys of a struct type's fields, and for each
// field of struct (or slice or pointer of struct) type, its keys.
func typeShape(typ reflect.Type) map[string][]string {
	out := map[string][]string{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var ks []string
		if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
			for j := range ft.NumField() {
				k, _, _ := strings.Cut(ft.Field(j).Tag.Get("json"), ",")
				ks = append(ks, k)
			}
			sort.Strings(ks)
		}
		out[name] = ks
	}
	return out
}

// jsonShape returns the keys of a decoded JSON object, and for each value
// that is an object or an array of objects, the keys found in it.
func jsonShape(v map[string]any) map[string][]string {
	out := map[string][]string{}
	for k, val := range v {
		seen := map[string]bool{}
		var objs []any
		switch x := val.(type) {
		case map[string]any:
			objs = []any{x}
		case []any:
			objs = x
		}
		for _, o := range objs {
			if m, ok := o.(map[string]any); ok {
				for kk := range m {
					seen[kk] = true
				}
			}
		}
		var ks []string
		for kk := range seen {
			ks = append(ks, kk)
		}
		sort.Strings(ks)
		out[k] = ks
	}
	return out
}

// TestStatusJSONDocumented checks docs/cli.md's table of `status --json`
// against the fields the command can print and against what it prints for
// a configuration that uses nearly all of them.
func TestStatusJSONDocumented(t *testing.T) {
	doc := docShape(t, "../../docs/cli.md", "### status --json")
	if d := cmp.Diff(typeShape(reflect.TypeOf(statusJSON{})), doc); d != "" {
		t.Errorf("docs/cli.md's status --json table differs from the fields status can print (-code +doc):\n%s", d)
	}

	home, e := statusFixture(t)
	var out bytes.Buffer
	e.stdout = &out
	if code := run(context.Background(), e, []string{"status", "--json"}); code != 0 {
		t.Fatalf("status --json exited %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out.Bytes())
	}
	real := jsonShape(got)
	// A store that does not answer (its variable is not set) has an error:
	// the fixture's store is local.
	real["store"] = append(real["store"], storeErrorKeys(t)...)
	for field, keys := range real {
		documented, ok := doc[field]
		if !ok {
			t.Errorf("status --json prints %q, which docs/cli.md does not list", field)
			continue
		}
		for _, k := range keys {
			if !slices.Contains(documented, k) {
				t.Errorf("status --json prints %s.%s, which docs/cli.md does not list", field, k)
			}
		}
	}
	for field, keys := range doc {
		for _, k := range keys {
			if !slices.Contains(real[field], k) {
				t.Errorf("docs/cli.md lists %s.%s, which status --json did not print\n%s", field, k, out.Bytes())
			}
		}
	}
	if !strings.Contains(out.String(), home+"/") {
		t.Errorf("status --json names no file under HOME:\n%s", out.Bytes())
	}
}

// storeErrorKeys returns the keys of status --json's store where
// settings.store's variables are not set.
func storeErrorKeys(t *testing.T) []string {
	home := t.TempDir()
	path := filepath.Join(mkdir(t, filepath.Join(home, ".config/switchboard")), "config.json")
	if err := os.WriteFile(path, []byte(`{"settings": {"store": {"postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &bytes.Buffer{}, lookupEnv: func(string) (string, bool) { return "", false },
		getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
		cwd: home, goos: "linux"}
	if code := run(context.Background(), e, []string{"status", "--json"}); code != 0 {
		t.Fatalf("status --json with an unset settings.store variable exited %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	store, _ := got["store"].(map[string]any)
	if store["kind"] != "postgres" || store["answers"] != false || !strings.Contains(fmt.Sprint(store["error"]), "the variable DATABASE_URL is not set") {
		t.Errorf("status --json's store with DATABASE_URL unset = %v", store)
	}
	return jsonShape(got)["store"]
}

// statusFixture makes a HOME whose configuration has a server of each
// kind: indexed (with a quarantined tool and a policy warning), failed, disabled by a higher file, invalid, imported, and
// an untrusted project; and returns an env in its project.
func statusFixture(t *testing.T) (string, *env) {
	home := t.TempDir()
	files := map[string]string{
		".config/mcp/mcp.json": `{"mcpServers": {"lower": {"command": "lower-server", "bogusField": 1}}}`,
		".config/switchboard/config.json": `{"imports": ["cursor"], "settings": {"credentialStore": "file"}, "mcpServers": {
			"good": {"command": "good-server", "approve": ["nomatch_*"]},
			"api": {"url": "https://example.com/mcp"},
			"lower": {"disabled": true},
			"lit": {"command": "srv", "env": {"API_TOKEN": "literal"}}
		}}`,
		".cursor/mcp.json": `{"mcpServers": {"imported": {"command": "imported-server"}}}`,
		"proj/.mcp.json":   `{"mcpServers": {"memory": {"command": "npx"}}}`,
	}
	for rel, content := range files {
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, lookupEnv: func(string) (string, bool) { return "", false },
		getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
		cwd: filepath.Join(home, "proj"), goos: "linux"}

	// What earlier commands would have left in the catalog: good indexed,
	// api refused authorization.
	c := config.Load(e.dirs(""))
	cat, err := catalog.Open(filepath.Join(mkdir(t, c.Dirs.CacheDir()), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	good, _ := c.Server("good")
	api, _ := c.Server("api")
	ctx := context.Background()
	if err := cat.Put(ctx, &catalog.Entry{Server: "good", Hash: good.Hash(), FetchedAt: time.Now(), Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}}); err != nil {
		t.Fatal(err)
	}
	// good's tool t changed since it was approved (quarantined), and its
	// approve glob matches nothing (a warning).
	if err := cat.SetPins(ctx, []catalog.Pin{{Server: "good", Tool: "t", Hash: "approved-before", Def: `{"name":"t"}`, FirstSeen: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := cat.PutFailure(ctx, catalog.Failure{Server: "api", Hash: api.Hash(), Class: "auth", Error: "HTTP 401", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return home, e
}

func mkdir(t *testing.T, dir string) string {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

package switchboard_test

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard"
)

// TestEngineIsTheLibrary keeps the Engine's methods to what a Go host
// calls: what only the gateway's own front (direct tools, transparent
// mode, roots) needs lives in internal/gateway. The command line and the
// panel are built on this library (TestProductUsesTheLibrary), so what
// they need is here too, as a host would want it. A method added here must
// be one a host needs: add it to the list with why.
func TestEngineIsTheLibrary(t *testing.T) {
	why := map[string]string{
		"Close":          "an engine owns connections, child processes and spill files",
		"Tool":           "the host registers the mcp tool with its model",
		"Handle":         "the host passes each call of the tool on",
		"Do":             "a host (the CLI) makes a request in Go rather than JSON",
		"NewSession":     "each agent of a host gets its own resource references",
		"Status":         "a host shows its servers without connecting them",
		"Subscribe":      "a host follows servers' states and lists as they change",
		"Index":          "a host lists servers ahead of time, for search",
		"Prune":          "after indexing, a host drops servers no longer configured from the catalog",
		"AuthStatus":     "a host shows which remote servers are logged in, and until when",
		"Login":          "a host's user logs in to a remote server when they choose to",
		"Logout":         "a host's user logs out of a remote server",
		"Quarantined":    "a host shows its user the tools whose definitions changed since approved",
		"Approve":        "a host's user accepts a changed definition, making the tool callable again",
		"AddSection":     "a host puts a server's resource (a guide, a schema) in its system prompt, read once",
		"Sections":       "a host builds its system prompt from the sections it added",
		"RemoveSections": "a host that stops using a server drops its sections (terret-mcp's unmount)",
		"RunScript":      "a Go host runs an agent's code-mode script, as serve's mcpScript tool does",
	}
	typ := reflect.TypeFor[*switchboard.Engine]()
	for i := range typ.NumMethod() {
		if m := typ.Method(i).Name; why[m] == "" {
			t.Errorf("Engine has method %s, which is not on the library's list: if only front needs it, it belongs to internal/gateway", m)
		}
	}
	for m := range why {
		if _, ok := typ.MethodByName(m); !ok {
			t.Errorf("the library's list names %s, which Engine lacks", m)
		}
	}
}

// TestAPIShowsNoPlumbing checks what go doc shows of the package: no
// exported declaration (constants and variables too) mentions the packages the engine is built of
// (catalog entries, upstream connections, the internal gateway).
func TestAPIShowsNoPlumbing(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/switchboard-mcp/switchboard")
	if err != nil {
		t.Fatal(err)
	}
	var decls []ast.Decl
	for _, c := range slices.Concat(p.Consts, p.Vars) {
		decls = append(decls, c.Decl)
	}
	for _, f := range p.Funcs {
		decls = append(decls, f.Decl)
	}
	for _, typ := range p.Types {
		decls = append(decls, typ.Decl)
		for _, c := range slices.Concat(typ.Consts, typ.Vars) {
			decls = append(decls, c.Decl)
		}
		for _, f := range typ.Funcs {
			decls = append(decls, f.Decl)
		}
		for _, m := range typ.Methods {
			decls = append(decls, m.Decl)
		}
	}
	for _, d := range decls {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, stripBodies(d)); err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{"catalog.", "upstream.", "gateway.", "front."} {
			if strings.Contains(b.String(), pkg) {
				t.Errorf("the exported declaration mentions %s:\n%s", strings.TrimSuffix(pkg, "."), b.String())
			}
		}
	}
}

// stripBodies returns the declaration as go doc shows it, less comments:
// without function bodies and unexported struct fields.
func stripBodies(d ast.Decl) ast.Decl {
	switch d := d.(type) {
	case *ast.FuncDecl:
		c := *d
		c.Body, c.Doc = nil, nil
		return &c
	case *ast.GenDecl:
		c := *d
		c.Specs, c.Doc = nil, nil
		for _, s := range d.Specs {
			if ts, ok := s.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					ts2, st2 := *ts, *st
					fields := &ast.FieldList{}
					for _, f := range st.Fields.List {
						if len(f.Names) > 0 && f.Names[0].IsExported() {
							f2 := *f
							f2.Doc, f2.Comment = nil, nil
							fields.List = append(fields.List, &f2)
						}
					}
					st2.Fields, ts2.Type = fields, &st2
					s = &ts2
				}
			}
			c.Specs = append(c.Specs, s)
		}
		return &c
	}
	return d
}

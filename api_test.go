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
// mode, roots) or command line needs lives in internal/gateway. A method
// added here must be one a host needs; add it to the list with its docs.
func TestEngineIsTheLibrary(t *testing.T) {
	allowed := []string{"Close", "Do", "Handle", "Index", "NewSession", "Status", "Subscribe", "Tool"}
	typ := reflect.TypeFor[*switchboard.Engine]()
	var got []string
	for i := range typ.NumMethod() {
		got = append(got, typ.Method(i).Name)
	}
	for _, m := range got {
		if !slices.Contains(allowed, m) {
			t.Errorf("Engine has method %s, which is not on the library's list: if only front or the CLI needs it, it belongs to internal/gateway", m)
		}
	}
}

// TestAPIShowsNoPlumbing checks what go doc shows of the package: no
// exported declaration mentions the packages the engine is built of
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
	for _, c := range p.Consts {
		decls = append(decls, c.Decl)
	}
	for _, f := range p.Funcs {
		decls = append(decls, f.Decl)
	}
	for _, typ := range p.Types {
		decls = append(decls, typ.Decl)
		for _, c := range typ.Consts {
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

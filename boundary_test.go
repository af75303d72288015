package switchboard_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The library boundary (docs/library.md): the public packages are the
// root and those a host must name; everything else is under internal/,
// free to change. These tests keep it, reading the source as go doc does.

const module = "github.com/switchboard-mcp/switchboard"

// publicPackages are the packages a Go host may import: every exported
// name in them is a promise.
var publicPackages = []string{".", "proxy", "config", "config/hosts", "bound", "credstore", "oauth", "policy", "telemetry", "front", "host"}

// knownLeaks are exported declarations of public packages that still name
// an internal type, each with why it is not fixed here. Remove an entry
// once it is fixed: the test fails on an entry that no longer leaks.
var knownLeaks = map[string]string{}

// TestProductUsesTheLibrary: the command line and the panel make and use
// their engines through the root package, as a Go host does, never through
// the engine's body (internal/gateway): what they need is the library's
// API, so the product proves the library enough.
func TestProductUsesTheLibrary(t *testing.T) {
	forbidden := module + "/internal/gateway"
	for _, dir := range []string{"cmd", "internal/panel"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == forbidden {
					t.Errorf("%s imports %s: use the library (package switchboard) instead, adding there what a host would want too", p, forbidden)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPublicAPINamesNoInternalType: no exported declaration of a public
// package (a type, a function or method's signature, an exported field, a
// variable or constant) names anything of an internal package, which a
// host could not name and every change of which would break it.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	found := map[string]bool{}
	for _, dir := range publicPackages {
		for _, leak := range internalNames(t, dir) {
			if want, ok := knownLeaks[leak.decl]; ok && want == leak.name {
				found[leak.decl] = true
				continue
			}
			t.Errorf("%s: the exported %s names %s, from an internal package: return a public type instead, or leave the declaration unexported",
				leak.pos, leak.decl, leak.name)
		}
	}
	for decl := range knownLeaks {
		if !found[decl] {
			t.Errorf("%s is listed among the known leaks but names no internal type any more: remove it from knownLeaks", decl)
		}
	}
}

// leak is a name from an internal package in an exported declaration.
type leak struct {
	pos  token.Position
	decl string // package.Name, or package.Type.Method
	name string // the name used, as in the source: catalog.Pin
}

// internalNames returns every use of an internal package's name in the
// exported declarations of the package in dir (its files for every
// platform, tests left out).
func internalNames(t *testing.T, dir string) []leak {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []leak
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		internal := internalImports(t, f)
		if len(internal) == 0 {
			continue
		}
		for decl, nodes := range exported(f) {
			for _, node := range nodes {
				ast.Inspect(node, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
						out = append(out, leak{pos: fset.Position(sel.Pos()), decl: f.Name.Name + "." + decl, name: id.Name + "." + sel.Sel.Name})
					}
					return true
				})
			}
		}
	}
	return out
}

// internalImports returns the names by which f refers to internal
// packages (this module's, or any other's).
func internalImports(t *testing.T, f *ast.File) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(p+"/", "/internal/") {
			continue
		}
		name := packageName(t, p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = true
	}
	return out
}

// packageName is the name a package of this module declares, or the last
// element of the path of another's.
func packageName(t *testing.T, importPath string) string {
	rel, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return path.Base(importPath)
	}
	entries, err := os.ReadDir(filepath.FromSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(filepath.FromSlash(rel), e.Name()), nil, parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			return f.Name.Name
		}
	}
	return path.Base(importPath)
}

// exported returns what go doc shows of f's exported declarations, by
// name: function and method signatures (not bodies), types with their
// exported fields and methods, and exported variables and constants.
func exported(f *ast.File) map[string][]ast.Node {
	out := map[string][]ast.Node{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			out[name] = []ast.Node{d.Type}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out[s.Name.Name] = exportedPart(s)
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						var nodes []ast.Node
						if s.Type != nil {
							nodes = append(nodes, s.Type)
						}
						if i < len(s.Values) {
							nodes = append(nodes, s.Values[i])
						}
						out[n.Name] = nodes
					}
				}
			}
		}
	}
	return out
}

// exportedPart returns a type's declaration as go doc shows it: a struct
// without its unexported fields (an embedded field counts: its fields and
// methods are promoted).
func exportedPart(s *ast.TypeSpec) []ast.Node {
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return []ast.Node{s}
	}
	var nodes []ast.Node
	if s.TypeParams != nil {
		nodes = append(nodes, s.TypeParams)
	}
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 || slices.ContainsFunc(field.Names, (*ast.Ident).IsExported) {
			nodes = append(nodes, field.Type)
		}
	}
	return nodes
}

// receiverType is the name of a method's receiver type.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestReadmeListsThePackages: the README's Packages section has a row for
// each public package, and no other, and names every internal package
// below it.
func TestReadmeListsThePackages(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Packages\n")
	if !ok {
		t.Fatal("the README has no Packages section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	table, internal, ok := strings.Cut(section, "Everything else is internal")
	if !ok {
		t.Fatal(`the README's Packages section does not say "Everything else is internal"`)
	}
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, name := range strings.Split(cell, ",") {
			name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), "(root)"))
			rows = append(rows, strings.Trim(name, "`"))
		}
	}
	var want []string
	for _, p := range publicPackages {
		if p == "." {
			p = "switchboard"
		}
		want = append(want, p)
	}
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Errorf("the README's table of public packages lists %q, want %q", rows, want)
	}
	dirs, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !strings.Contains(internal, "`"+d.Name()+"`") && !strings.Contains(internal, "`internal/"+d.Name()) {
			t.Errorf("the README's Packages section does not name internal/%s", d.Name())
		}
	}
}

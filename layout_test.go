// The repository's layout rules, checked from the code's own imports.
package layout_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fluss-sidecar/fluss-sidecar"

// imports lists, for every package of the module, the module packages its
// non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		graph[pkg] = nil
		for _, dep := range fields[1:] {
			if rest, ok := strings.CutPrefix(dep, module+"/"); ok {
				graph[pkg] = append(graph[pkg], rest)
			}
		}
	}
	return graph
}

// folder is the top-level folder a package lives in.
func folder(pkg string) string {
	top, _, _ := strings.Cut(pkg, "/")
	return top
}

// TestLayered: the top-level folders stand in layers, each importing only
// folders below it, so no import runs from a folder back up to one that
// (through others) imports it.
func TestLayered(t *testing.T) {
	deps := map[string]map[string]bool{}
	for pkg, imps := range imports(t) {
		from := folder(pkg)
		if deps[from] == nil {
			deps[from] = map[string]bool{}
		}
		for _, imp := range imps {
			if to := folder(imp); to != from {
				deps[from][to] = true
			}
		}
	}
	// Peel off, layer by layer, the folders whose imports all stand lower.
	placed := map[string]int{}
	for layer := 1; len(placed) < len(deps); layer++ {
		var next []string
		for f, to := range deps {
			if _, ok := placed[f]; ok {
				continue
			}
			ready := true
			for d := range to {
				if _, ok := placed[d]; !ok {
					ready = false
				}
			}
			if ready {
				next = append(next, f)
			}
		}
		if len(next) == 0 {
			var left []string
			for f, to := range deps {
				if _, ok := placed[f]; !ok {
					for d := range to {
						if _, ok := placed[d]; !ok {
							left = append(left, f+" -> "+d)
						}
					}
				}
			}
			slices.Sort(left)
			t.Fatalf("these folders import each other, directly or through others, so they cannot stand in layers:\n%s", strings.Join(left, "\n"))
		}
		for _, f := range next {
			placed[f] = layer
		}
	}
}

// TestInternalHoldsTestKitsOnly: nothing outside internal/ imports it from
// a non-test file; runtime helpers live beside their users.
func TestInternalHoldsTestKitsOnly(t *testing.T) {
	for pkg, imps := range imports(t) {
		if folder(pkg) == "internal" {
			continue
		}
		for _, imp := range imps {
			if folder(imp) == "internal" {
				t.Errorf("%s imports %s outside its tests", pkg, imp)
			}
		}
	}
}

// TestFlussCodesMadeInOneFile: apierr/fluss.go is the one non-test file
// that chooses a Fluss error code. Anywhere else a code may be read,
// compared with NONE, passed on or decoded from bytes, but naming one of
// package flusserr's code constants, or converting a number written in
// the code to a Code, is choosing one.
func TestFlussCodesMadeInOneFile(t *testing.T) {
	fset := token.NewFileSet()
	codes := map[string]bool{}
	paths, err := filepath.Glob(filepath.Join("flusserr", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
					for _, name := range vs.Names {
						codes[name.Name] = true
					}
				}
			}
			return true
		})
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d code constants in flusserr: the test no longer reads them", len(codes))
	}
	delete(codes, "None")
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "flusserr" || strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join("apierr", "fluss.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "flusserr" && codes[n.Sel.Name] {
					t.Errorf("%s: names the code flusserr.%s; make it a class in apierr and map it in apierr/fluss.go", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) != 1 {
					break
				}
				x, ok := sel.X.(*ast.Ident)
				if _, lit := n.Args[0].(*ast.BasicLit); ok && lit && x.Name == "flusserr" && sel.Sel.Name == "Code" {
					t.Errorf("%s: converts a number to a Fluss code; map it in apierr/fluss.go", fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The repository's layout rules, checked from the code's own imports.
package layout_test

import (
	"bufio"
	"bytes"
	"os/exec"
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

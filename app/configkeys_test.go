package app

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var update = flag.Bool("update", false, "rewrite README.md's configuration table from the configuration table")

// TestConfigTable checks every row: one row per key, a default that parses
// as the row's kind, one line of doc, and Secret on every key whose name
// Fluss would treat as sensitive.
func TestConfigTable(t *testing.T) {
	seen := map[string]bool{}
	parse := map[Kind]func(string) error{
		KindText:      func(string) error { return nil },
		KindListeners: func(v string) error { _, err := config.ParseListeners(v); return err },
		KindDuration:  func(v string) error { _, err := config.ParseDuration(v); return err },
		KindMemory:    func(v string) error { _, err := config.ParseMemorySize(v); return err },
		KindInt:       func(v string) error { _, err := strconv.ParseInt(v, 10, 64); return err },
		KindBool:      func(v string) error { _, err := strconv.ParseBool(v); return err },
	}
	for _, k := range ConfigKeys() {
		for _, name := range k.spellings() {
			if seen[name] {
				t.Errorf("%s: more than one row", name)
			}
			seen[name] = true
			if hasSensitivePart(name) && !k.Secret {
				t.Errorf("%s: its name marks a secret but the row is not Secret", name)
			}
		}
		p, ok := parse[k.Kind]
		if !ok {
			t.Errorf("%s: unknown kind %d", k.Name, k.Kind)
		} else if k.Default != "" {
			if err := p(k.Default); err != nil {
				t.Errorf("%s: default %q: %v", k.Name, k.Default, err)
			}
		}
		if k.Default != "" && k.Unset != "" {
			t.Errorf("%s: both a default and an Unset note", k.Name)
		}
		if k.Doc == "" || strings.ContainsAny(k.Doc, "\n|") {
			t.Errorf("%s: doc %q is not one line of a table cell", k.Name, k.Doc)
		}
		if k.Short && !strings.HasPrefix(k.Name, "fs.") {
			t.Errorf("%s: Short but not an fs. key", k.Name)
		}
	}
}

// TestConfigDefaultsMatchTheCode pins the table's defaults to the
// constants the packages below fall back on when a value is zero, and to
// what authz reads from an empty configuration.
func TestConfigDefaultsMatchTheCode(t *testing.T) {
	eq := func(key string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: table default %v, code default %v", key, got, want)
		}
	}
	eq(KeyZKMaxBufferSize, defaultMemory(KeyZKMaxBufferSize), int64(zk.DefaultMaxBufferSize))
	eq(KeyZKServerMaxBuffer, defaultMemory(KeyZKServerMaxBuffer), int64(zk.DefaultServerMaxBuffer))
	eq(KeyMaxRequestSize, defaultMemory(KeyMaxRequestSize), int64(wire.DefaultMaxFrameSize))
	eq(KeyIdleTimeout, defaultDuration(KeyIdleTimeout), wire.DefaultIdleTimeout)
	eq(KeyMaxInFlight, defaultInt(KeyMaxInFlight), int64(wire.DefaultMaxInFlightPerConn))
	eq(KeyMaxRunningPerConn, defaultInt(KeyMaxRunningPerConn), int64(wire.DefaultMaxRunningPerConn))
	eq(KeyMaxQueuedBytes, defaultMemory(KeyMaxQueuedBytes), wire.DefaultRequestBudget)
	eq(KeyDrainTimeout, defaultDuration(KeyDrainTimeout), wire.DefaultDrainTimeout)
	eq(KeyRequestTimeout, defaultDuration(KeyRequestTimeout), 30*time.Second) // sidecar.New's default
	eq(KeyCacheMaxBytes, defaultMemory(KeyCacheMaxBytes), int64(snapcache.DefaultMaxBytes))
	eq(KeyCacheMaxEntries, defaultInt(KeyCacheMaxEntries), int64(snapcache.DefaultMaxEntries))

	sec, err := authz.SettingsFromConfig(config.New(), []string{"FLUSS"})
	if err != nil {
		t.Fatal(err)
	}
	eq(authz.KeyInternalListener, defaultText(authz.KeyInternalListener), sec.InternalListener)
	eq(authz.KeyAuthTimeout, defaultDuration(authz.KeyAuthTimeout), sec.AuthTimeout)
	eq(authz.KeyAuthorizerEnabled, defaultBool(authz.KeyAuthorizerEnabled), sec.AuthorizerEnabled)
	eq(authz.KeyIgnoreCase, defaultBool(authz.KeyIgnoreCase), sec.IgnoreCase)
	eq(authz.KeyRequireTableForEmpty, defaultBool(authz.KeyRequireTableForEmpty), sec.RequireTableForEmpty)
	c := config.New()
	c.Set(authz.KeyProtocolMap, "FLUSS:sasl")
	if sec, err = authz.SettingsFromConfig(c, []string{"FLUSS"}); err != nil {
		t.Fatal(err)
	}
	eq(authz.KeyMechanisms, defaultText(authz.KeyMechanisms), strings.Join(sec.Listeners["FLUSS"].Mechanisms, ","))
}

// TestKeyConstantsAreInTheTable: every Key constant of app and authz names
// a row, so a key cannot be read without being documented and checked.
func TestKeyConstantsAreInTheTable(t *testing.T) {
	n := 0
	for _, f := range []string{"configkeys.go", "../authz/settings.go"} {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Key") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						continue
					}
					n++
					if v, _ := strconv.Unquote(lit.Value); !IsKnownKey(v) {
						t.Errorf("%s: %s = %q is not in the configuration table", f, id.Name, v)
					}
				}
			}
		}
	}
	if n < 60 {
		t.Fatalf("found %d key constants: the declarations moved?", n)
	}
}

func TestKnownKeys(t *testing.T) {
	for _, k := range []string{"zookeeper.address", "fs.gs.storage.root.url", "gs.storage.root.url", "obs.access.key",
		"fs.azure.account.key.acct.dfs.core.windows.net", "azure.account.key.acct.dfs.core.windows.net", "azure.account.key",
		"security.sasl.listener.name.client.plain.jaas.config",
		"remote.data.dirs", "remote.data.dirs.strategy", "remote.data.dirs.weights"} {
		if !IsKnownKey(k) {
			t.Errorf("%q is not known", k)
		}
	}
	for _, k := range []string{"zookeeper.adress", "cosn.userinfo.secretId", "oss.endpoint", "fs.azure.account.key.", "sidecar.nope"} {
		if IsKnownKey(k) {
			t.Errorf("%q is known", k)
		}
	}
	if !slices.IsSorted(KnownKeys()) || slices.ContainsFunc(KnownKeys(), func(k string) bool { return strings.Contains(k, "<") }) {
		t.Errorf("KnownKeys is not a sorted list of keys: %v", KnownKeys())
	}
}

// TestKeysAreSpeltOnce: each key is written as a string literal in
// exactly one non-test Go file of the module, where its constant is
// declared; everything else names the constant. In the packages that can
// import app (app and the command) that holds for a key inside a message
// too; the packages app builds on cannot name app's constants, and a
// message of theirs may name a key (see keyMentionsBelowApp).
func TestKeysAreSpeltOnce(t *testing.T) {
	type spelling struct {
		key   string
		short bool // derived from its key, never written
		re    *regexp.Regexp
	}
	var keys []spelling
	for _, k := range ConfigKeys() {
		for i, name := range k.spellings() {
			if strings.Contains(name, "<") {
				continue
			}
			// Not part of a longer key: no key character before, none
			// after (a "." only where a sentence ends).
			keys = append(keys, spelling{name, i > 0,
				regexp.MustCompile(`(^|[^A-Za-z0-9_.-])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_.<-]|\.($|[^A-Za-z0-9_<-]))`)})
		}
	}
	spelt := map[string]map[string]bool{}     // key -> files with a literal that is the key
	mentioned := map[string]map[string]bool{} // key -> files of app or the command with a literal that names it
	add := func(m map[string]map[string]bool, key, path string) {
		if m[key] == nil {
			m[key] = map[string]bool{}
		}
		m[key][path] = true
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".deps", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		aboveApp := strings.HasPrefix(path, "../app/") || strings.HasPrefix(path, "../cmd/")
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, k := range keys {
				if v == k.key {
					add(spelt, k.key, path)
				}
				if aboveApp && strings.Contains(v, k.key) && k.re.MatchString(v) {
					add(mentioned, k.key, path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.short {
			if f := mentioned[k.key]; len(f) != 0 || len(spelt[k.key]) != 0 {
				t.Errorf("the short spelling %s is written in %v", k.key, slices.Sorted(maps.Keys(f)))
			}
			continue
		}
		if f := spelt[k.key]; len(f) != 1 {
			t.Errorf("%s is spelt in %d non-test files: %v", k.key, len(f), slices.Sorted(maps.Keys(f)))
			continue
		}
		for f := range mentioned[k.key] {
			if !spelt[k.key][f] {
				t.Errorf("%s names %s in a message; use its constant", f, k.key)
			}
		}
	}
}

// The configuration reference in README.md is generated from the table.
const (
	readmeTableStart = "<!-- configuration table: generated from app/configkeys.go; `go test ./app -run TestConfigReferenceInREADME -update` rewrites it -->\n"
	readmeTableEnd   = "<!-- end of the configuration table -->\n"
)

// configKeysMarkdown is README.md's configuration reference.
func configKeysMarkdown() string {
	var b strings.Builder
	b.WriteString("\n| Key | Default | Secret | Meaning |\n|---|---|---|---|\n")
	for _, k := range ConfigKeys() {
		names := "`" + k.Name + "`"
		if s := k.spellings(); len(s) > 1 {
			names += " (also `" + s[1] + "`)"
		}
		def := k.Unset
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		secret := ""
		if k.Secret {
			secret = "yes"
		}
		b.WriteString("| " + names + " | " + def + " | " + secret + " | " + k.Doc + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

// TestConfigReferenceInREADME fails when README.md's configuration table
// is not the one the configuration table gives (keys, defaults, secrets,
// meanings); -update rewrites it.
func TestConfigReferenceInREADME(t *testing.T) {
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, readmeTableStart)
	end := strings.Index(readme, readmeTableEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no configuration table between %q and %q", readmeTableStart, readmeTableEnd)
	}
	got := readme[start+len(readmeTableStart) : end]
	want := configKeysMarkdown()
	if got == want {
		return
	}
	if *update {
		readme = readme[:start+len(readmeTableStart)] + want + readme[end:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("README.md's configuration table differs from app/configkeys.go at row %d:\nREADME: %s\ntable:  %s\n(go test ./app -run TestConfigReferenceInREADME -update rewrites it)", i-1, g, w)
		}
	}
}

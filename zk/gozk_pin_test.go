package zk

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	gozk "github.com/go-zookeeper/zk"
)

// The facts of go-zookeeper's source that gozk_internals.go relies on, as
// they read in v1.0.4, where they were checked by hand. Types are source
// text as go/types prints an expression.
var (
	// Signatures (parameter types, then result types) of the two methods
	// that gozk_internals.go links to.
	pinnedMethods = map[string]string{
		"(*Conn).queueRequest": "(int32, interface{}, interface{}, func(*request, *responseHeader, error)) <-chan response",
		"(*Conn).request":      "(int32, interface{}, interface{}, func(*request, *responseHeader, error)) (int64, error)",
	}
	// response, which queuedReply mirrors: every field, in order.
	pinnedResponse = []string{"zxid int64", "err error"}
	// The request fields that carry what zk passes: its records, the reply
	// channel and the callback that only nil is passed for.
	pinnedRequestFields = []string{
		"pkt interface{}",
		"recvStruct interface{}",
		"recvChan chan response",
		"recvFunc func(*request, *responseHeader, error)",
	}
	// go-zookeeper's records for the requests zk sends itself, which zk's
	// records mirror: every field, in order.
	pinnedRecords = map[string][]string{
		"syncRequest":     {"Path string"},
		"syncResponse":    {"Path string"},
		"getDataRequest":  {"Path string", "Watch bool"},
		"getDataResponse": {"Data []byte", "Stat Stat"},
	}
	// The two functions of go-zookeeper's reflection codec.
	codecFuncs = []string{"encodePacketValue", "decodePacketValue"}
)

// zkRecords are zk's records, each with go-zookeeper's record of the same
// layout ("" for none); every kind they hold must be handled by the codec.
var zkRecords = []struct {
	value  any
	mirror string
}{
	{syncRecord{}, "syncRequest"},
	{syncRecord{}, "syncResponse"},
	{getDataRecord{}, "getDataRequest"},
	{getDataReply{}, "getDataResponse"},
	{addWatchRequest{}, ""},
	{addWatchResponse{}, ""},
}

// TestGoZookeeperSourcePinned reads the go-zookeeper source this module
// builds with and fails, naming each difference, when a fact that
// gozk_internals.go relies on no longer holds there.
func TestGoZookeeperSourcePinned(t *testing.T) {
	src := parseGozk(t, gozkDir(t))
	for _, d := range gozkDifferences(src) {
		t.Error(d)
	}
}

// TestGoZookeeperVersionPinned: besides the facts the source pin checks,
// gozk_internals.go relies on behaviour no parse can check (two queued
// requests are sent in queueing order; the receiving goroutine hands
// events to the callback before later replies to their callers). Those
// were checked by hand for v1.0.4, so any other version, or a replacement,
// fails here until someone checks them again and updates this test.
func TestGoZookeeperVersionPinned(t *testing.T) {
	m := gozkInfo(t)
	if m.Replace != nil {
		t.Fatalf("go-zookeeper is replaced by %s %s: check the facts listed in zk/gozk_internals.go", m.Replace.Path, m.Replace.Version)
	}
	if m.Version != "v1.0.4" {
		t.Fatalf("go-zookeeper is %s: check the facts listed in zk/gozk_internals.go and update this test", m.Version)
	}
}

// TestGoZookeeperPinBites runs the same comparison over a copy of the
// go-zookeeper source with one relied fact changed and expects that fact,
// and only it, named.
func TestGoZookeeperPinBites(t *testing.T) {
	dir := gozkDir(t)
	for _, tc := range []struct {
		name, file, old, new string
		want                 string // in one of the differences
	}{
		{"queueRequest result", "conn.go",
			"recvFunc func(*request, *responseHeader, error)) <-chan response {",
			"recvFunc func(*request, *responseHeader, error)) <-chan *response {",
			"(*Conn).queueRequest"},
		{"request parameter", "conn.go",
			"func (c *Conn) request(opcode int32,", "func (c *Conn) request(opcode int64,",
			"(*Conn).request"},
		{"request gone", "conn.go",
			"func (c *Conn) request(", "func (c *Conn) doRequest(",
			"(*Conn).request"},
		{"response fields swapped", "conn.go",
			"\tzxid int64\n\terr  error\n", "\terr  error\n\tzxid int64\n",
			"response"},
		{"response field added", "conn.go",
			"\tzxid int64\n\terr  error\n", "\tzxid int64\n\terr  error\n\tn    int\n",
			"response"},
		{"recvFunc type", "conn.go",
			"\trecvFunc func(*request, *responseHeader, error)\n}",
			"\trecvFunc func(*request, *responseHeader, error, bool)\n}",
			"request.recvFunc"},
		{"recvFunc called unguarded", "conn.go",
			"if req.recvFunc != nil {", "if req != nil {",
			"recvFunc called"},
		{"opSync value", "constants.go",
			"opSync            = 9", "opSync            = 90",
			"opSync"},
		{"opGetData gone", "constants.go",
			"opGetData         = 4\n", "",
			"opGetData"},
		{"addWatch added", "constants.go",
			"opSetWatches      = 101\n", "opSetWatches      = 101\n\topAddWatch = 106\n",
			"opAddWatch"},
		{"addWatch value taken", "constants.go",
			"opSetWatches      = 101\n", "opSetWatches      = 101\n\topWatch2 = 106\n",
			"106"},
		{"unknown code text", "constants.go",
			`"unknown error: %v"`, `"zk: unknown error %v"`,
			"toError"},
		{"unimplemented mapped", "constants.go",
			"errBadArguments:      ErrBadArguments,",
			"errBadArguments:      ErrBadArguments,\n\t\terrUnimplemented: ErrAPIError,",
			"-6"},
		{"SASL code mapped", "constants.go",
			"errBadArguments:      ErrBadArguments,",
			"errBadArguments:      ErrBadArguments,\n\t\t-124: ErrAPIError,",
			"-124"},
		{"getData request field", "structs.go",
			"type pathWatchRequest struct {\n\tPath  string\n\tWatch bool\n",
			"type pathWatchRequest struct {\n\tPath  string\n\tWatch int32\n",
			"getDataRequest"},
		{"getData response field", "structs.go",
			"type getDataResponse struct {\n\tData []byte\n\tStat Stat\n",
			"type getDataResponse struct {\n\tStat Stat\n\tData []byte\n",
			"getDataResponse"},
		{"codec without bool", "structs.go",
			"case reflect.Bool:", "case reflect.Uint16:",
			"reflect.Bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			copyGoSources(t, dir, tmp)
			path := filepath.Join(tmp, tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.old) {
				t.Fatalf("%s has no %q to change: update this case", tc.file, tc.old)
			}
			changed := strings.Replace(string(b), tc.old, tc.new, 1)
			if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			diffs := gozkDifferences(parseGozk(t, tmp))
			if len(diffs) == 0 {
				t.Fatalf("change not reported (want a difference naming %q)", tc.want)
			}
			for _, d := range diffs {
				if !strings.Contains(d, tc.want) {
					t.Errorf("difference %q does not name %q", d, tc.want)
				}
			}
			t.Log(diffs)
		})
	}
}

// TestGozkMirrorsMatchPin checks zk's side: the linkname declarations, with
// the receiver as first parameter and each stand-in read as the type it
// stands for, have the pinned signatures, and queuedReply and the records
// have the pinned fields.
func TestGozkMirrorsMatchPin(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   any
	}{
		{"(*Conn).queueRequest", gozkQueueRequest},
		{"(*Conn).request", gozkRequest},
	} {
		if got := declaredSignature(tc.fn); got != pinnedMethods[tc.name] {
			t.Errorf("%s declared as %s, pinned %s", tc.name, got, pinnedMethods[tc.name])
		}
	}
	if got := mirrorFields(reflect.TypeFor[queuedReply]()); !slices.Equal(got, pinnedResponse) {
		t.Errorf("queuedReply fields %q, response's are %q", got, pinnedResponse)
	}
	for _, r := range zkRecords {
		if r.mirror == "" {
			continue
		}
		typ := reflect.TypeOf(r.value)
		if got := mirrorFields(typ); !slices.Equal(got, pinnedRecords[r.mirror]) {
			t.Errorf("%s fields %q, %s's are %q", typ.Name(), got, r.mirror, pinnedRecords[r.mirror])
		}
	}
	if got := reflect.TypeFor[gozkRecvFunc]().String(); got != "func(*struct {}, *struct {}, error)" {
		t.Errorf("gozkRecvFunc is %s", got)
	}
}

// TestGozkMirrorsCheckBites: declarations that differ from the pinned
// signatures in one type each are told apart from them.
func TestGozkMirrorsCheckBites(t *testing.T) {
	//lint:ignore U1000 a declaration for its fields' names and types, read by reflection
	type reply struct {
		zxid int64
		err  error
	}
	want := pinnedMethods["(*Conn).request"]
	for _, tc := range []struct {
		name string
		fn   any
	}{
		{"no receiver", func(int32, any, any, gozkRecvFunc) (int64, error) { return 0, nil }},
		{"opcode type", func(*gozk.Conn, int64, any, any, gozkRecvFunc) (int64, error) { return 0, nil }},
		{"callback type", func(*gozk.Conn, int32, any, any, func(*struct{}, error)) (int64, error) { return 0, nil }},
		{"result", func(*gozk.Conn, int32, any, any, gozkRecvFunc) (int32, error) { return 0, nil }},
		{"reply look-alike", func(*gozk.Conn, int32, any, any, gozkRecvFunc) <-chan reply { return nil }},
	} {
		if got := declaredSignature(tc.fn); got == want || got == pinnedMethods["(*Conn).queueRequest"] {
			t.Errorf("%s: %s taken for a pinned signature", tc.name, got)
		}
	}
}

// declaredSignature renders the type of a linkname declaration as the
// signature of the method it links to: the first parameter (the receiver,
// *Conn) dropped, each stand-in read as the type it stands for.
func declaredSignature(fn any) string {
	ft := reflect.TypeOf(fn)
	if ft.NumIn() == 0 || ft.In(0) != reflect.TypeFor[*gozk.Conn]() {
		return "no *Conn receiver: " + ft.String()
	}
	var in, out []string
	for i := 1; i < ft.NumIn(); i++ {
		in = append(in, gozkTypeText(ft.In(i)))
	}
	for i := range ft.NumOut() {
		out = append(out, gozkTypeText(ft.Out(i)))
	}
	return signatureText(in, out)
}

// gozkTypeText renders a type of zk's declarations as go-zookeeper's source
// names the type it stands for.
func gozkTypeText(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[queuedReply]():
		return "response"
	case t == reflect.TypeFor[gozkRecvFunc]():
		return "func(*request, *responseHeader, error)"
	case t == reflect.TypeFor[any]():
		return "interface{}"
	case t == reflect.TypeFor[error]():
		return "error"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "[]byte"
	case t.Kind() == reflect.Chan:
		prefix := map[reflect.ChanDir]string{reflect.RecvDir: "<-chan ", reflect.SendDir: "chan<- ", reflect.BothDir: "chan "}[t.ChanDir()]
		return prefix + gozkTypeText(t.Elem())
	case t.PkgPath() == reflect.TypeFor[gozk.Stat]().PkgPath():
		return t.Name()
	}
	return t.String()
}

func mirrorFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		out = append(out, f.Name+" "+gozkTypeText(f.Type))
	}
	return out
}

func signatureText(in, out []string) string {
	s := "(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
		return s
	case 1:
		return s + " " + out[0]
	}
	return s + " (" + strings.Join(out, ", ") + ")"
}

// gozkModule is what the go command says of the go-zookeeper module this
// module builds with.
type gozkModule struct {
	Version string
	Dir     string
	Replace *struct{ Path, Version string }
}

func gozkInfo(t *testing.T) gozkModule {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot locate go-zookeeper's source to check the pin")
	}
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/go-zookeeper/zk").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/go-zookeeper/zk: %v", err)
	}
	var m gozkModule
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// gozkDir is the directory of go-zookeeper's source.
func gozkDir(t *testing.T) string {
	t.Helper()
	m := gozkInfo(t)
	if m.Dir == "" {
		t.Fatalf("go-zookeeper %s is not in the module cache (go mod download github.com/go-zookeeper/zk)", m.Version)
	}
	return m.Dir
}

func copyGoSources(t *testing.T, from, to string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(from, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(n)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gozkSource indexes the top-level declarations of go-zookeeper's package.
type gozkSource struct {
	methods map[string]*ast.FuncDecl // "(*Conn).request", "ErrCode.toError", "encodePacket", …
	types   map[string]*ast.TypeSpec
	values  map[string]*ast.ValueSpec // per name, for consts and vars
	consts  map[string]int64          // constants whose value is an integer literal
}

func parseGozk(t *testing.T, dir string) *gozkSource {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := &gozkSource{
		methods: map[string]*ast.FuncDecl{},
		types:   map[string]*ast.TypeSpec{},
		values:  map[string]*ast.ValueSpec{},
		consts:  map[string]int64{},
	}
	fset := token.NewFileSet()
	parsed := 0
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse go-zookeeper source: %v", err)
		}
		if f.Name.Name != "zk" {
			continue
		}
		parsed++
		src.add(f)
	}
	if parsed == 0 {
		t.Fatalf("no go-zookeeper source in %s", dir)
	}
	return src
}

func (s *gozkSource) add(f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				recv := types.ExprString(d.Recv.List[0].Type)
				if strings.HasPrefix(recv, "*") {
					recv = "(" + recv + ")"
				}
				name = recv + "." + name
			}
			s.methods[name] = d
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					s.types[sp.Name.Name] = sp
				case *ast.ValueSpec:
					for i, id := range sp.Names {
						s.values[id.Name] = sp
						if d.Tok == token.CONST && i < len(sp.Values) {
							if v, ok := intLiteral(sp.Values[i]); ok {
								s.consts[id.Name] = v
							}
						}
					}
				}
			}
		}
	}
}

// intLiteral is the value of an integer literal, possibly negated.
func intLiteral(e ast.Expr) (int64, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	v, err := strconv.ParseInt(lit.Value, 0, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// gozkDifferences compares src with every relied fact and describes each
// one that does not hold.
func gozkDifferences(src *gozkSource) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	for _, name := range slices.Sorted(maps.Keys(pinnedMethods)) {
		d := src.methods[name]
		if d == nil {
			add("%s: no such method in go-zookeeper", name)
			continue
		}
		if got := funcSignature(d.Type); got != pinnedMethods[name] {
			add("%s: signature %s, pinned %s", name, got, pinnedMethods[name])
		}
	}

	if got, ok := src.structFields("response"); !ok || !slices.Equal(got, pinnedResponse) {
		add("response (mirrored by queuedReply): fields %q, pinned %q", got, pinnedResponse)
	}
	reqFields, _ := src.structFields("request")
	for _, want := range pinnedRequestFields {
		if !slices.Contains(reqFields, want) {
			name, _, _ := strings.Cut(want, " ")
			add("request.%s: want field %q; request has %q", name, want, reqFields)
		}
	}
	diffs = append(diffs, src.unguardedRecvFuncCalls()...)

	for _, op := range []struct {
		name string
		want int64
	}{{"opSync", opSync}, {"opGetData", opGetData}} {
		if v, ok := src.consts[op.name]; !ok || v != op.want {
			add("%s: go-zookeeper's value %v (defined: %v), zk sends %d", op.name, v, ok, op.want)
		}
	}
	if v, ok := src.consts["opAddWatch"]; ok {
		add("opAddWatch: go-zookeeper now defines it (= %d): check whether its public API offers addWatch", v)
	}
	for name, v := range src.consts {
		if strings.HasPrefix(name, "op") && v == opAddWatch && name != "opAddWatch" {
			add("%s: go-zookeeper gives addWatch's opcode %d another name", name, v)
		}
	}

	if toErr := src.methods["ErrCode.toError"]; toErr == nil {
		add("ErrCode.toError: no such method in go-zookeeper")
	} else if formats := errorfFormats(toErr); !slices.Contains(formats, gozkUnknownCodeFormat) {
		add("ErrCode.toError: formats %q, zk matches %q", formats, gozkUnknownCodeFormat)
	}
	mapped, err := src.mappedErrorCodes()
	if err != nil {
		add("errCodeToError: %v", err)
	}
	for _, code := range []int64{codeUnimplemented, codeSessionClosedSASL} {
		if slices.Contains(mapped, code) {
			add("errCodeToError maps code %d to an error value: zk matches its unknown-code text", code)
		}
	}

	for _, name := range slices.Sorted(maps.Keys(pinnedRecords)) {
		if got, ok := src.structFields(name); !ok || !slices.Equal(got, pinnedRecords[name]) {
			add("%s: fields %q, pinned %q", name, got, pinnedRecords[name])
		}
	}
	kinds := map[reflect.Kind]bool{}
	for _, r := range zkRecords {
		recordKinds(reflect.TypeOf(r.value), kinds)
	}
	for _, fn := range codecFuncs {
		d := src.methods[fn]
		if d == nil {
			add("%s: no such function in go-zookeeper", fn)
			continue
		}
		handled := caseSelectors(d, "reflect")
		for _, k := range slices.Sorted(maps.Keys(kinds)) {
			name := strings.ToUpper(k.String()[:1]) + k.String()[1:]
			if !handled[name] {
				add("%s: no case for reflect.%s, which zk's records hold", fn, name)
			}
		}
	}
	return diffs
}

func funcSignature(ft *ast.FuncType) string {
	return signatureText(fieldTypes(ft.Params), fieldTypes(ft.Results))
}

func fieldTypes(fl *ast.FieldList) []string {
	if fl == nil {
		return nil
	}
	var out []string
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, types.ExprString(f.Type))
		}
	}
	return out
}

// structFields lists "name type" for each field of the named struct type,
// following a definition from another type (type syncRequest pathRequest).
func (s *gozkSource) structFields(name string) ([]string, bool) {
	for range 8 {
		ts := s.types[name]
		if ts == nil {
			return nil, false
		}
		switch typ := ts.Type.(type) {
		case *ast.Ident:
			name = typ.Name
			continue
		case *ast.StructType:
			var out []string
			for _, f := range typ.Fields.List {
				for _, id := range f.Names {
					out = append(out, id.Name+" "+types.ExprString(f.Type))
				}
				if len(f.Names) == 0 {
					out = append(out, types.ExprString(f.Type))
				}
			}
			return out, true
		}
		return nil, false
	}
	return nil, false
}

// unguardedRecvFuncCalls reports each call of a request's recvFunc that
// is not inside an "if x.recvFunc != nil" block: zk passes nil for it.
func (s *gozkSource) unguardedRecvFuncCalls() []string {
	var out []string
	for name, d := range s.methods {
		if d.Body == nil {
			continue
		}
		var guarded []ast.Node
		ast.Inspect(d.Body, func(n ast.Node) bool {
			if is, ok := n.(*ast.IfStmt); ok {
				if b, ok := is.Cond.(*ast.BinaryExpr); ok && b.Op == token.NEQ &&
					isSelector(b.X, "recvFunc") && types.ExprString(b.Y) == "nil" {
					guarded = append(guarded, is.Body)
				}
			}
			return true
		})
		ast.Inspect(d.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isSelector(call.Fun, "recvFunc") {
				return true
			}
			if !slices.ContainsFunc(guarded, func(g ast.Node) bool { return g.Pos() <= call.Pos() && call.End() <= g.End() }) {
				out = append(out, fmt.Sprintf("%s: recvFunc called without a nil check (zk passes nil)", name))
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

func isSelector(e ast.Expr, sel string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == sel
}

// errorfFormats lists the literal formats of fmt.Errorf calls in d.
func errorfFormats(d *ast.FuncDecl) []string {
	var out []string
	ast.Inspect(d, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || types.ExprString(call.Fun) != "fmt.Errorf" || len(call.Args) == 0 {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// mappedErrorCodes lists the codes that errCodeToError maps to an error.
func (s *gozkSource) mappedErrorCodes() ([]int64, error) {
	spec := s.values["errCodeToError"]
	if spec == nil {
		return nil, fmt.Errorf("no such variable in go-zookeeper")
	}
	var lit *ast.CompositeLit
	for i, id := range spec.Names {
		if id.Name == "errCodeToError" && i < len(spec.Values) {
			lit, _ = spec.Values[i].(*ast.CompositeLit)
		}
	}
	if lit == nil {
		return nil, fmt.Errorf("not a map literal")
	}
	var codes []int64
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("element %s is not key: value", types.ExprString(e))
		}
		v, ok := intLiteral(kv.Key)
		if id, isIdent := kv.Key.(*ast.Ident); isIdent {
			v, ok = s.consts[id.Name]
		}
		if !ok {
			return nil, fmt.Errorf("key %s is not an integer constant", types.ExprString(kv.Key))
		}
		codes = append(codes, v)
	}
	return codes, nil
}

// recordKinds adds the kinds that encoding a value of type t involves.
func recordKinds(t reflect.Type, kinds map[reflect.Kind]bool) {
	kinds[t.Kind()] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			recordKinds(t.Field(i).Type, kinds)
		}
	case reflect.Slice:
		recordKinds(t.Elem(), kinds)
	}
}

// caseSelectors is the set of pkg.Name selectors in d's case clauses.
func caseSelectors(d *ast.FuncDecl, pkg string) map[string]bool {
	out := map[string]bool{}
	ast.Inspect(d, func(n ast.Node) bool {
		cc, ok := n.(*ast.CaseClause)
		if !ok {
			return true
		}
		for _, e := range cc.List {
			if sel, ok := e.(*ast.SelectorExpr); ok && types.ExprString(sel.X) == pkg {
				out[sel.Sel.Name] = true
			}
		}
		return true
	})
	return out
}

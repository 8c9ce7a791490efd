package compat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

const protoPath = "../messages/fluss.proto"

func readPinFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pinDiffs parses a .proto file and compares it with vectors/messages.pin.
func pinDiffs(t testing.TB, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseProto(string(src))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want, err := ParseMessagePin(readPinFile(t, "messages.pin"))
	if err != nil {
		t.Fatalf("messages.pin: %v", err)
	}
	if len(want) < 20 {
		t.Fatalf("messages.pin lists only %d messages", len(want))
	}
	return ComparePin(got, want)
}

// TestProtoPin: messages/fluss.proto, read as text, holds exactly the
// messages, field numbers, labels and types of docs/protocol.md §6.
func TestProtoPin(t *testing.T) {
	for _, d := range pinDiffs(t, protoPath) {
		t.Error(d)
	}
}

// TestProtoPinCatchesABrokenNumber runs the pin on a copy of fluss.proto
// with one field number changed (log_end_offset 4 → 3, the classic mistake)
// and on copies with a label, a type and a packed option changed.
func TestProtoPinCatchesABrokenNumber(t *testing.T) {
	src, err := os.ReadFile(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ old, new, want string }{
		"number": {"optional int64 log_end_offset = 4;", "optional int64 log_end_offset = 3;",
			"PbBucketOffset.log_end_offset: .proto has optional int64 log_end_offset = 3, spec has optional int64 log_end_offset = 4"},
		"label":   {"required int32 error_code = 1;", "optional int32 error_code = 1;", "ErrorResponse.error_code"},
		"type":    {"optional int32 result = 1;", "optional int64 result = 1;", "RegisterProducerOffsetsResponse.result"},
		"packed":  {"repeated int32 replica_id = 3 [packed = true];", "repeated int32 replica_id = 3;", "PbBucketMetadata.replica_id"},
		"dropped": {"optional string rack = 5;", "", "PbServerNode.rack: in the spec (= 5), missing"},
		"extra":   {"optional int32 server_type = 2;", "optional int32 server_type = 2;\n  optional int32 extra = 9;", "ApiVersionsResponse.extra: in the .proto (= 9), not in the spec"},
	} {
		t.Run(name, func(t *testing.T) {
			mutated := strings.Replace(string(src), c.old, c.new, 1)
			if mutated == string(src) {
				t.Fatalf("%q not found in %s", c.old, protoPath)
			}
			path := filepath.Join(t.TempDir(), "fluss.proto")
			if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
				t.Fatal(err)
			}
			diffs := pinDiffs(t, path)
			if len(diffs) != 1 || !strings.Contains(diffs[0], c.want) {
				t.Fatalf("diffs = %q, want one containing %q", diffs, c.want)
			}
			t.Logf("pin reports: %s", diffs[0])
		})
	}
}

// TestProtoPinMatchesGeneratedCode cross-checks the text parse against the
// descriptors compiled into the messages package, so the generated Go code
// cannot lag behind fluss.proto.
func TestProtoPinMatchesGeneratedCode(t *testing.T) {
	src, err := os.ReadFile(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseProto(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var fromDesc []ProtoMessage
	for _, m := range parsed {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(protoPackage + "." + m.Name))
		if err != nil {
			t.Errorf("generated code lacks %s", m.Name)
			continue
		}
		md := mt.Descriptor()
		pm := ProtoMessage{Name: m.Name}
		for i := 0; i < md.Fields().Len(); i++ {
			fd := md.Fields().Get(i)
			f := ProtoField{Number: int(fd.Number()), Name: string(fd.Name()), Packed: fd.IsPacked()}
			switch fd.Cardinality() {
			case protoreflect.Required:
				f.Label = "required"
			case protoreflect.Optional:
				f.Label = "optional"
			case protoreflect.Repeated:
				f.Label = "repeated"
			}
			if fd.Kind() == protoreflect.MessageKind {
				f.Type = string(fd.Message().Name())
			} else {
				f.Type = fd.Kind().String()
			}
			pm.Fields = append(pm.Fields, f)
		}
		fromDesc = append(fromDesc, pm)
	}
	for _, d := range ComparePin(fromDesc, parsed) {
		t.Errorf("generated code differs from fluss.proto (run make generate): %s", d)
	}
}

// TestAPIKeysPin: the keys the sidecar serves carry the names of docs/protocol.md
// §5 in the messages package's key table, and their messages exist.
func TestAPIKeysPin(t *testing.T) {
	pins, err := ParseAPIKeyPin(readPinFile(t, "api_keys.pin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != 7 {
		t.Fatalf("api_keys.pin has %d keys, the sidecar serves 7", len(pins))
	}
	for _, p := range pins {
		if got := messages.Key(p.Key).Name(); got != p.Name {
			t.Errorf("key %d: messages names it %s, spec %s", p.Key, got, p.Name)
		}
		for _, m := range []string{p.Request, p.Response} {
			if _, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(protoPackage + "." + m)); err != nil {
				t.Errorf("%s: message %s: %v", p.Name, m, err)
			}
		}
	}
}

// TestAPIKeyNamesPin: the messages package's key table is docs/protocol.md §5, row
// for row, and every Key constant declared in messages/apikeys.go is named
// after the spec's name of its number (KeyAPIVersions = 1000 API_VERSIONS).
func TestAPIKeyNamesPin(t *testing.T) {
	pins, err := ParseAPIKeyNamePin(readPinFile(t, "api_key_names.pin"))
	if err != nil {
		t.Fatal(err)
	}
	keys := messages.Keys()
	if len(keys) != len(pins) {
		t.Errorf("messages knows %d api keys, the spec %d", len(keys), len(pins))
	}
	byKey := map[int16]string{}
	for i, p := range pins {
		byKey[p.Key] = p.Name
		if i < len(keys) && (int16(keys[i]) != p.Key || keys[i].Name() != p.Name) {
			t.Errorf("row %d: messages has %d %s, spec %d %s", i, keys[i], keys[i].Name(), p.Key, p.Name)
		}
	}
	if len(pins) == 0 || int16(messages.FirstKey) != pins[0].Key {
		t.Errorf("messages.FirstKey = %d is not the spec's lowest key", messages.FirstKey)
	}
	if got := messages.Key(999).Name(); got != "UNKNOWN(999)" {
		t.Errorf("Key(999).Name() = %q", got)
	}

	consts := keyConstants(t, "../messages/apikeys.go")
	if len(consts) < 9 {
		t.Fatalf("found only %d Key constants in messages/apikeys.go", len(consts))
	}
	for name, v := range consts {
		if name == "FirstKey" {
			continue
		}
		spec, ok := byKey[v]
		if !ok || !strings.EqualFold(name, "Key"+strings.ReplaceAll(spec, "_", "")) {
			t.Errorf("messages.%s = %d, which the spec calls %q", name, v, spec)
		}
	}
}

// keyConstants returns the constants of type Key declared in a Go file,
// with their literal values.
func keyConstants(t *testing.T, path string) map[string]int16 {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int16{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Key" {
				continue
			}
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: %s is not a literal", path, n.Name)
				}
				v, err := strconv.ParseInt(lit.Value, 0, 16)
				if err != nil {
					t.Fatalf("%s: %s: %v", path, n.Name, err)
				}
				out[n.Name] = int16(v)
			}
		}
	}
	return out
}

// TestErrorCodesPin: flusserr's table is docs/protocol.md §4, row for row, and the
// codes the sidecar uses by name carry the spec's numbers.
func TestErrorCodesPin(t *testing.T) {
	pins, err := ParseErrorCodePin(readPinFile(t, "error_codes.pin"))
	if err != nil {
		t.Fatal(err)
	}
	all := flusserr.All()
	if len(all) != len(pins) {
		t.Errorf("flusserr knows %d codes, the spec %d", len(all), len(pins))
	}
	byName := map[string]ErrorCodePin{}
	for _, p := range pins {
		byName[p.Name] = p
		info, ok := flusserr.Lookup(flusserr.Code(p.Code))
		if !ok {
			t.Errorf("code %d %s missing from flusserr", p.Code, p.Name)
			continue
		}
		if info.Name != p.Name || info.Retriable != p.Retriable || info.DefaultMessage != p.DefaultMessage {
			t.Errorf("code %d: flusserr %q retriable=%v %q; spec %q retriable=%v %q",
				p.Code, info.Name, info.Retriable, info.DefaultMessage, p.Name, p.Retriable, p.DefaultMessage)
		}
	}
	for _, used := range []flusserr.Code{
		flusserr.UnknownServerError, flusserr.None, flusserr.NetworkException, flusserr.UnsupportedVersion,
		flusserr.CorruptMessage, flusserr.UnknownTableOrBucket, flusserr.RequestTimeOut, flusserr.StorageException,
		flusserr.AuthenticateException, flusserr.SecurityDisabled, flusserr.AuthorizationException,
		flusserr.RetriableAuthenticate, flusserr.InvalidProducerID, flusserr.NotCoordinatorLeader,
	} {
		p, ok := byName[used.Name()]
		if !ok || p.Code != int32(used) {
			t.Errorf("flusserr constant %d (%s) is not the spec's code for that name", int32(used), used.Name())
		}
	}
	for name, code := range map[string]int32{"UNKNOWN_SERVER_ERROR": -1, "UNSUPPORTED_VERSION": 2, "CORRUPT_MESSAGE": 3,
		"AUTHENTICATE_EXCEPTION": 46, "AUTHORIZATION_EXCEPTION": 48, "INVALID_PRODUCER_ID_EXCEPTION": 63} {
		if byName[name].Code != code {
			t.Errorf("error_codes.pin: %s = %d, want %d", name, byName[name].Code, code)
		}
	}
}

func TestParseProtoRejects(t *testing.T) {
	for name, src := range map[string]string{
		"nested":        "message A { message B { } }",
		"enum":          "enum E { X = 0; }",
		"oneof":         "message A { oneof o { int32 x = 1; } }",
		"no label":      "message A { int32 x = 1; }",
		"dup number":    "message A { optional int32 x = 1; optional int32 y = 1; }",
		"dup message":   "message A {} message A {}",
		"unclosed":      "message A { optional int32 x = 1;",
		"bad number":    "message A { optional int32 x = 0; }",
		"comment":       "/* open",
		"string":        "option x = \"open;",
		"group":         "message A { optional group g = 1; }",
		"missing semi":  "message A { optional int32 x = 1 }",
		"bad option":    "message A { repeated int32 x = 1 [packed = maybe]; }",
		"bad character": "message A { optional int32 x = 1; } $",
	} {
		if _, err := ParseProto(src); err == nil {
			t.Errorf("%s: accepted %q", name, src)
		}
	}
	msgs, err := ParseProto("syntax = \"proto2\"; // c\n/* c */ message A { repeated int64 x = 3 [packed = true, deprecated = false]; }\nmessage B {}")
	if err != nil || len(msgs) != 2 || msgs[0].Fields[0] != (ProtoField{Number: 3, Label: "repeated", Type: "int64", Name: "x", Packed: true}) || len(msgs[1].Fields) != 0 {
		t.Fatalf("ParseProto = %+v, %v", msgs, err)
	}
}

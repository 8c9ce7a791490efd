package compat

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/javaorder"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	_ "github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

const vectorsDir = "vectors"

// protoPackage is the package of messages/fluss.proto. It is not on the
// wire, so it may differ from Fluss's "fluss".
const protoPackage = "flusssidecar"

func loadFrames(t testing.TB) map[string]Frame {
	t.Helper()
	frames, err := LoadFrames(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// newMessage returns an empty message of our generated type name.
func newMessage(t testing.TB, name string) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(protoPackage + "." + name))
	if err != nil {
		t.Fatalf("message %s: %v", name, err)
	}
	return mt.New().Interface()
}

// decodedMessage is the vector's "decoded" meaning as a message.
func decodedMessage(t testing.TB, f Frame) proto.Message {
	t.Helper()
	m := newMessage(t, f.Message)
	if err := protojson.Unmarshal(f.Decoded, m); err != nil {
		t.Fatalf("%s: decoded: %v", f.Name, err)
	}
	return m
}

// TestFrameVectors checks, for every golden frame, that our encoders
// (proto.Marshal + wire.Append*) produce exactly its bytes from its stated
// meaning, and that our decoders (wire.ReadFrame/Parse*, proto.Unmarshal
// with required-field checks) read that meaning back.
func TestFrameVectors(t *testing.T) {
	frames := loadFrames(t)
	if len(frames) < 40 {
		t.Fatalf("only %d vectors", len(frames))
	}
	for name, f := range frames {
		t.Run(name, func(t *testing.T) {
			raw, _ := f.Bytes()
			body, _ := f.Body()
			if f.Kind == "invalid" {
				_, err := wire.ReadFrame(bytes.NewReader(raw), 0)
				var fe *wire.FrameError
				if !errors.As(err, &fe) || fe.Kind != wire.FrameNegativeLength {
					t.Fatalf("ReadFrame = %v, want a negative-length FrameError", err)
				}
				return
			}
			payload, err := wire.ReadFrame(bytes.NewReader(raw), 0)
			if err != nil {
				t.Fatal(err)
			}
			var decoded proto.Message
			if f.Message != "" {
				decoded = decodedMessage(t, f)
				got := newMessage(t, f.Message)
				if err := proto.Unmarshal(body, got); err != nil {
					t.Fatalf("strict decode of the body: %v", err)
				}
				if !proto.Equal(got, decoded) {
					t.Fatalf("body decodes to %v, the vector says %v", got, decoded)
				}
				enc, err := proto.Marshal(decoded)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, body) {
					t.Fatalf("proto.Marshal = % x\nvector body   = % x", enc, body)
				}
			}
			var built []byte
			switch f.Kind {
			case "request":
				h, b, err := wire.ParseRequest(payload)
				if err != nil || h.APIKey != messages.Key(*f.APIKey) || h.APIVersion != *f.APIVersion || h.RequestID != *f.RequestID || !bytes.Equal(b, body) {
					t.Fatalf("ParseRequest = %+v % x %v", h, b, err)
				}
				built = wire.AppendRequest(nil, wire.RequestHeader{APIKey: messages.Key(*f.APIKey), APIVersion: *f.APIVersion, RequestID: *f.RequestID}, body)
			case "success", "error", "server_failure":
				r, err := wire.ParseResponse(payload)
				if err != nil || !bytes.Equal(r.Body, body) {
					t.Fatalf("ParseResponse = %+v %v", r, err)
				}
				want := map[string]wire.ResponseType{"success": wire.ResponseSuccess, "error": wire.ResponseError, "server_failure": wire.ResponseServerFailure}[f.Kind]
				if r.Type != want {
					t.Fatalf("type %v, want %v", r.Type, want)
				}
				if f.Kind == "server_failure" {
					if f.RequestID != nil {
						t.Fatal("a SERVER_FAILURE vector has a request id")
					}
				} else if r.RequestID != *f.RequestID {
					t.Fatalf("request id %d, want %d", r.RequestID, *f.RequestID)
				}
				switch f.Kind {
				case "success":
					built = wire.AppendSuccess(nil, *f.RequestID, body)
				default:
					em := decoded.(interface {
						GetErrorCode() int32
						GetErrorMessage() string
					})
					fe, ok := flusserr.From(r.Err())
					if !ok || int32(fe.Code) != em.GetErrorCode() || fe.Message != em.GetErrorMessage() {
						t.Fatalf("Err() = %v", r.Err())
					}
					if f.Kind == "error" {
						built = wire.AppendError(nil, *f.RequestID, flusserr.Code(em.GetErrorCode()), em.GetErrorMessage())
					} else {
						built = wire.AppendServerFailure(nil, flusserr.Code(em.GetErrorCode()), em.GetErrorMessage())
					}
				}
			default:
				t.Fatalf("unknown frame kind %q", f.Kind)
			}
			if !bytes.Equal(built, raw) {
				t.Fatalf("our encoder = % x\nvector      = % x", built, raw)
			}
		})
	}
}

// TestFrameVectorsCoverIssue checks the vector set holds every frame it
// must, so a vector cannot quietly disappear.
func TestFrameVectorsCoverIssue(t *testing.T) {
	frames := loadFrames(t)
	for _, name := range []string{
		"api_versions_request", "api_versions_response", "authenticate_request_plain", "authenticate_response_plain",
		"metadata_request_empty", "metadata_response", "tablet_api_versions_response", "tablet_error_2_elsewhere",
		"register_request_nonpartitioned", "register_request_partitioned", "register_request_empty",
		"register_response_created", "register_response_already_exists",
		"get_request", "get_response_nonpartitioned", "get_response_partitioned", "get_response_empty", "get_response_not_found",
		"delete_request", "delete_response",
		"error_minus1_bare", "error_2_bare", "error_3_bare", "error_46_plaintext", "error_48_authorization", "error_63_bare",
		"error_63_invalid_producer_id", "server_failure_bare", "server_failure_negative_length",
	} {
		if _, ok := frames[name]; !ok {
			t.Errorf("vector %s is missing", name)
		}
	}
	// The spec's own examples, byte for byte (docs/protocol.md §1, §3).
	for name, want := range map[string]string{
		"api_versions_request":        "00 00 00 16 03 e8 00 00 00 00 00 00 0a 05 66 6c 75 73 73 12 05 30 2e 31 2e 30",
		"error_63_bare":               "00 00 00 07 01 00 00 00 07 08 3f",
		"authenticate_response_plain": "00 00 00 07 00 00 00 00 01 0a 00",
	} {
		if frames[name].Hex != want {
			t.Errorf("%s = %s, want %s", name, frames[name].Hex, want)
		}
	}
	if b := frames["error_minus1_bare"].BodyHex; b != "08 ff ff ff ff ff ff ff ff ff 01" {
		t.Errorf("code -1 body = %s", b)
	}
}

func TestParseFrameRejectsInconsistentVectors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(vectorsDir, "frames", "error_63_bare.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFrame(good); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(string) string{
		"length":     func(s string) string { return strings.Replace(s, `"hex": "00 00 00 07`, `"hex": "00 00 00 08`, 1) },
		"layout":     func(s string) string { return strings.Replace(s, `{"hex": "08 3f"`, `{"hex": "08 3e"`, 1) },
		"body":       func(s string) string { return strings.Replace(s, `"body_hex": "08 3f"`, `"body_hex": "08 3e"`, 1) },
		"not json":   func(s string) string { return s[:10] },
		"hex letter": func(s string) string { return strings.Replace(s, `"hex": "00 00 00 07`, `"hex": "zz 00 00 07`, 1) },
	} {
		bad := mutate(string(good))
		if bad == string(good) {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if _, err := ParseFrame([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func loadJSON(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonStrict(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestStorageVectors checks the znode and offsets-file bytes of docs/storage-format.md
// §1.2 and §6 against flussjson.EncodeSnapshot / flussjson.EncodeTableOffsets, and
// that decoding gives the stated data.
func TestStorageVectors(t *testing.T) {
	var vs []StorageVector
	loadJSON(t, "storage.json", &vs)
	kinds := map[string]int{}
	for _, v := range vs {
		kinds[v.Kind]++
		t.Run(v.Name, func(t *testing.T) {
			switch v.Kind {
			case "producer_znode":
				var s offsets.Snapshot
				s.ExpirationTime = v.Snapshot.ExpirationTime
				var given []int64
				for _, tb := range v.Snapshot.Tables {
					s.Tables = append(s.Tables, offsets.FileRef{TableID: tb.TableID, OffsetsPath: tb.OffsetsPath})
					given = append(given, tb.TableID)
				}
				// EncodeSnapshot writes the order it is given; a vector with
				// decoded_tables states the order of a HashMap<Long,…> filled
				// by put, which javaorder must reproduce.
				enc := s
				if v.DecodedTables != nil {
					if got, exact := javaorder.PutOrder(given); !exact || !slices.Equal(got, v.DecodedTables) {
						t.Fatalf("javaorder.PutOrder(%v) = %v (exact %v), want %v", given, got, exact, v.DecodedTables)
					}
					byID := map[int64]offsets.FileRef{}
					for _, ref := range s.Tables {
						byID[ref.TableID] = ref
					}
					enc.Tables = nil
					for _, id := range v.DecodedTables {
						enc.Tables = append(enc.Tables, byID[id])
					}
				}
				if got := flussjson.EncodeSnapshot(enc); string(got) != v.JSON {
					t.Fatalf("EncodeSnapshot = %s\nwant            %s", got, v.JSON)
				}
				dec, err := flussjson.DecodeSnapshot([]byte(v.JSON))
				if err != nil {
					t.Fatal(err)
				}
				order := v.DecodedTables
				if order == nil {
					for _, tb := range s.Tables {
						order = append(order, tb.TableID)
					}
				}
				if dec.ExpirationTime != s.ExpirationTime || len(dec.Tables) != len(order) {
					t.Fatalf("DecodeSnapshot = %+v", dec)
				}
				paths := map[int64]string{}
				for _, tb := range s.Tables {
					paths[tb.TableID] = tb.OffsetsPath
				}
				for i, id := range order {
					if dec.Tables[i].TableID != id || dec.Tables[i].OffsetsPath != paths[id] {
						t.Fatalf("table %d = %+v, want %d %s", i, dec.Tables[i], id, paths[id])
					}
				}
			case "offsets_file":
				to := offsets.TableOffsets{TableID: v.TableID}
				for _, b := range v.Buckets {
					bo := offsets.BucketOffset{BucketID: b.BucketID, LogEndOffset: b.LogEndOffset}
					if b.PartitionID != nil {
						bo.Partitioned, bo.PartitionID = true, *b.PartitionID
					}
					to.Buckets = append(to.Buckets, bo)
				}
				got, err := flussjson.EncodeTableOffsets(to)
				if err != nil || string(got) != v.JSON {
					t.Fatalf("EncodeTableOffsets = %s, %v\nwant                %s", got, err, v.JSON)
				}
				dec, err := flussjson.DecodeTableOffsets([]byte(v.JSON))
				if err != nil {
					t.Fatal(err)
				}
				if dec.TableID != to.TableID || len(dec.Buckets) != len(to.Buckets) {
					t.Fatalf("DecodeTableOffsets = %+v, want %+v", dec, to)
				}
				for i := range to.Buckets {
					if dec.Buckets[i] != to.Buckets[i] {
						t.Fatalf("bucket %d = %+v, want %+v", i, dec.Buckets[i], to.Buckets[i])
					}
				}
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
		})
	}
	if kinds["producer_znode"] < 3 || kinds["offsets_file"] < 5 {
		t.Fatalf("too few storage vectors: %v", kinds)
	}
}

// TestFsPathVectors checks remote.ParseFsPath against docs/storage-format.md §5.
func TestFsPathVectors(t *testing.T) {
	var v FsPathVectors
	loadJSON(t, "fspath.json", &v)
	if len(v.Rows) < 10 {
		t.Fatalf("only %d rows", len(v.Rows))
	}
	for _, row := range v.Rows {
		t.Run(strconv.Quote(row.Input), func(t *testing.T) {
			p, err := remote.ParseFsPath(row.Input)
			if row.Error != "" {
				if err == nil || !strings.Contains(err.Error(), row.Error) {
					t.Fatalf("ParseFsPath = %v, %v; want error %q", p, err, row.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if row.String != nil && p.String() != *row.String {
				t.Errorf("String() = %q, want %q", p.String(), *row.String)
			}
			if row.Authority != nil && p.Authority != *row.Authority {
				t.Errorf("authority = %q, want %q", p.Authority, *row.Authority)
			}
			if row.ProducersDir != "" {
				if got := p.Join("producers").String(); got != row.ProducersDir {
					t.Errorf("producers dir = %q, want %q", got, row.ProducersDir)
				}
			}
			if row.OffsetsPath != "" {
				got := p.Join("producers").Join(v.ProducerID).Join(strconv.FormatInt(v.TableID, 10)).Join(v.UUID + ".offsets").String()
				if got != row.OffsetsPath {
					t.Errorf("offsets path = %q, want %q", got, row.OffsetsPath)
				}
				// Re-parsing a stored path gives it back unchanged.
				again, err := remote.ParseFsPath(got)
				if err != nil || again.String() != got {
					t.Errorf("re-parse = %q, %v", again.String(), err)
				}
			}
		})
	}
}

package wire

import (
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

func TestDecodeRequestProblems(t *testing.T) {
	partial := func(m proto.Message) []byte { return marshalPartial(t, m) }
	// table_offsets[1] holds a bucket_offsets entry cut short.
	cut := protowire.AppendTag(nil, 1, protowire.BytesType)
	cut = protowire.AppendString(cut, "job")
	tbl0 := partial(&messages.PbProducerTableOffsets{TableId: proto.Int64(1)})
	cut = protowire.AppendTag(cut, 2, protowire.BytesType)
	cut = protowire.AppendBytes(cut, tbl0)
	inner := protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 2), 2, protowire.BytesType)
	inner = append(inner, 0x05, 0x10) // claims 5 bytes, has 1
	cut = protowire.AppendTag(cut, 2, protowire.BytesType)
	cut = protowire.AppendBytes(cut, inner)

	for _, tt := range []struct {
		name string
		req  proto.Message
		body []byte
		want string
	}{
		{"valid", &messages.GetProducerOffsetsRequest{}, partial(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("a")}), ""},
		{"empty body", &messages.GetProducerOffsetsRequest{}, nil, "required field producer_id is missing"},
		{"nested required", &messages.RegisterProducerOffsetsRequest{}, partial(&messages.RegisterProducerOffsetsRequest{
			ProducerId:   proto.String("a"),
			TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1)}, {}},
		}), "required field table_offsets[1].table_id is missing"},
		{"truncated string", &messages.GetProducerOffsetsRequest{}, []byte{0x0a, 0x05, 'f'}, "field producer_id is truncated or malformed"},
		{"truncated nested", &messages.RegisterProducerOffsetsRequest{}, cut, "field table_offsets[1].bucket_offsets[0] is truncated or malformed"},
		{"bad tag", &messages.GetProducerOffsetsRequest{}, []byte{0xff, 0xff, 0xff}, "a field tag is malformed"},
		{"unknown field cut short", &messages.GetProducerOffsetsRequest{}, []byte{0x3a, 0x09}, "field number 7 is truncated or malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := decodeRequest(tt.body, tt.req)
			if got != tt.want {
				t.Fatalf("problem %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzDecodeRequestProblem(f *testing.F) {
	f.Add([]byte{0x0a, 0x05, 'f'})
	f.Add([]byte{0x12, 0x02, 0x08})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		problem, err := decodeRequest(b, &messages.RegisterProducerOffsetsRequest{})
		if (problem == "") != (err == nil) {
			t.Fatalf("problem %q with error %v", problem, err)
		}
		if !utf8.ValidString(problem) || strings.Contains(problem, "flusssidecar") || strings.Contains(problem, "\u00a0") {
			t.Fatalf("problem text %q", problem)
		}
	})
}

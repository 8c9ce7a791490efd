package sidecar

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestProducerIDOfBody: the subject of a request's log line is the
// producer_id a decoder would keep (the last one), read without decoding.
func TestProducerIDOfBody(t *testing.T) {
	reg, err := proto.Marshal(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("job-1"), TtlMs: proto.Int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	twice := protowire.AppendString(protowire.AppendTag(append([]byte(nil), reg...), reqProducerID, protowire.BytesType), "job-2")
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"register", reg, "job-1"},
		{"the last occurrence wins", twice, "job-2"},
		{"empty", nil, ""},
		{"truncated", []byte{0x0a, 0x05, 'f'}, ""},
		{"id before garbage", append(append([]byte(nil), reg...), 0xff), "job-1"},
	}
	for _, tt := range tests {
		if got := producerIDOfBody(tt.body); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

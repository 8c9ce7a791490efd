package sidecar

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
)

// describeInput prints an input with its pointers followed, to compare.
func describeInput(in producer.RegisterInput) string {
	p := func(v *int64) string {
		if v == nil {
			return "nil"
		}
		return fmt.Sprint(*v)
	}
	s := "id="
	if in.ProducerID != nil {
		s += fmt.Sprintf("%q", *in.ProducerID)
	} else {
		s += "nil"
	}
	s += " ttl=" + p(in.TTLMillis)
	for _, t := range in.Tables {
		s += fmt.Sprintf(" [t%d", t.TableID)
		for _, b := range t.Buckets {
			s += fmt.Sprintf(" %s/%d=%s", p(b.PartitionID), b.BucketID, p(b.LogEndOffset))
		}
		// An array by bucket id stands for its buckets in ascending order.
		for id, v := range t.ByBucket {
			if v != -1 {
				s += fmt.Sprintf(" nil/%d=%d", id, v)
			}
		}
		s += "]"
	}
	return s
}

// checkSameAsProto: whenever decodeRegister reads a body, the generated
// message reads it too and gives the same input.
func checkSameAsProto(t *testing.T, body []byte) (read bool) {
	t.Helper()
	in, ok := decodeRegister(body)
	if !ok {
		return false
	}
	var req messages.RegisterProducerOffsetsRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatalf("decodeRegister read % x, which proto refuses: %v", body, err)
	}
	if got, want := describeInput(in), describeInput(registerInput(&req)); got != want {
		t.Fatalf("body % x:\n fast  %s\n proto %s", body, got, want)
	}
	return true
}

func TestDecodeRegister(t *testing.T) {
	t.Parallel()
	full := &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("job-1"), TtlMs: proto.Int64(-5),
		TableOffsets: []*messages.PbProducerTableOffsets{
			{TableId: proto.Int64(100), BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)}}},
			{TableId: proto.Int64(200), BucketOffsets: []*messages.PbBucketOffset{{PartitionId: proto.Int64(5), BucketId: proto.Int32(1), LogEndOffset: proto.Int64(7)}, {BucketId: proto.Int32(-3)}}},
			{TableId: proto.Int64(300)},
		},
	}
	body, _ := proto.Marshal(full)
	withUnknown := protowire.AppendString(protowire.AppendTag(append([]byte(nil), body...), 9, protowire.BytesType), "extra")
	twice := protowire.AppendString(protowire.AppendTag(append([]byte(nil), body...), 1, protowire.BytesType), "job-2")
	wrongType := protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), body...), 1, protowire.VarintType), 1)
	noTableID, _ := proto.MarshalOptions{AllowPartial: true}.Marshal(&messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("a"), TableOffsets: []*messages.PbProducerTableOffsets{{}}})
	for _, tt := range []struct {
		name     string
		body     []byte
		wantRead bool
	}{
		{"full", body, true},
		{"unknown field skipped", withUnknown, true},
		{"producer id twice: last wins", twice, true},
		{"known field with another wire type", wrongType, false},
		{"missing table id", noTableID, false},
		{"empty", nil, false},
		{"truncated", body[:len(body)-3], false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if read := checkSameAsProto(t, tt.body); read != tt.wantRead {
				t.Fatalf("read %v, want %v", read, tt.wantRead)
			}
		})
	}
}

func FuzzDecodeRegister(f *testing.F) {
	body, _ := proto.Marshal(&messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("job-1"),
		TableOffsets: []*messages.PbProducerTableOffsets{
			{TableId: proto.Int64(100), BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)}}},
			{TableId: proto.Int64(200), BucketOffsets: []*messages.PbBucketOffset{{PartitionId: proto.Int64(5), BucketId: proto.Int32(1)}}},
		},
	})
	f.Add(body)
	f.Add([]byte{0x0a, 0x01, 'a', 0x12, 0x02, 0x08, 0x01})
	// A table as Fluss clients send it, which becomes an array by bucket id.
	array, _ := proto.Marshal(&messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("a"),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1), BucketOffsets: []*messages.PbBucketOffset{
			{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(4)}, {BucketId: proto.Int32(2), LogEndOffset: proto.Int64(0)}}}},
	})
	f.Add(array)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSameAsProto(t, b)
	})
}

// TestDecodeRegisterForms: a table's buckets become an array by bucket id
// exactly when they are plain, ascending, each with an offset, and not
// sparse; otherwise a list. Either way the input is the generated
// message's.
func TestDecodeRegisterForms(t *testing.T) {
	t.Parallel()
	plain := func(ids ...int32) []*messages.PbBucketOffset {
		var bs []*messages.PbBucketOffset
		for _, id := range ids {
			bs = append(bs, &messages.PbBucketOffset{BucketId: proto.Int32(id), LogEndOffset: proto.Int64(int64(id) * 10)})
		}
		return bs
	}
	for _, tt := range []struct {
		name    string
		buckets []*messages.PbBucketOffset
		array   bool
	}{
		{"ascending", plain(0, 1, 2, 3), true},
		{"holes", plain(1, 3, 7), true},
		{"sparse", plain(0, 1000), false},
		{"the last bucket id", plain(producer.MaxBucketID), false},
		{"descending", plain(3, 2, 1), false},
		{"repeated", plain(1, 1), false},
		{"above the limit", plain(producer.MaxBucketID-1, producer.MaxBucketID+1), false},
		{"negative id", plain(-1, 0), false},
		{"partitioned", []*messages.PbBucketOffset{{PartitionId: proto.Int64(1), BucketId: proto.Int32(0), LogEndOffset: proto.Int64(1)}}, false},
		{"no offset", []*messages.PbBucketOffset{{BucketId: proto.Int32(0)}}, false},
		{"negative offset", []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(-1)}}, false},
		{"no buckets", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := proto.Marshal(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("p"),
				TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(7), BucketOffsets: tt.buckets}}})
			if err != nil {
				t.Fatal(err)
			}
			if !checkSameAsProto(t, body) {
				t.Fatal("not read")
			}
			in, _ := decodeRegister(body)
			if got := in.Tables[0].ByBucket != nil; got != tt.array || (got && len(in.Tables[0].Buckets) > 0) {
				t.Errorf("as an array: %v (list of %d), want %v", got, len(in.Tables[0].Buckets), tt.array)
			}
		})
	}
}

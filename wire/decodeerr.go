package wire

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
)

// DecodeBody decodes a request body of api at version into req. A body that
// does not decode gives an apierr.ErrMalformed failure (CORRUPT_MESSAGE to
// a client) whose message
// names the Fluss message and the field in plain words, e.g. "Failed to
// decode GetProducerOffsetsRequest of GET_PRODUCER_OFFSETS(1054) version 0:
// required field producer_id is missing".
func DecodeBody(api API, version int16, body []byte, req proto.Message) error {
	problem, _ := decodeRequest(body, req)
	if problem == "" {
		return nil
	}
	return &apierr.Error{Class: apierr.ErrMalformed, Detail: fmt.Sprintf("Failed to decode %s of %v version %d: %s",
		req.ProtoReflect().Descriptor().Name(), api, version, problem)}
}

// decodeRequest decodes body into req. On failure it returns a message for
// the client that names the Fluss message and the field in plain words,
// without the Go protobuf library's wording (our proto package name, its
// non-breaking spaces), and the library's error for the log.
func decodeRequest(body []byte, req proto.Message) (problem string, err error) {
	if err = (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(body, req); err != nil {
		md := req.ProtoReflect().Descriptor()
		if p := locateWireError(body, md, ""); p != "" {
			return p, err
		}
		return "the bytes are not a valid protobuf encoding", err
	}
	if err = proto.CheckInitialized(req); err != nil {
		if path := missingRequired(req.ProtoReflect(), ""); path != "" {
			return "required field " + path + " is missing", err
		}
		return "a required field is missing", err
	}
	return "", nil
}

// locateWireError walks b as an encoding of md and describes the first
// field that cannot be read, or returns "" if it finds none.
func locateWireError(b []byte, md protoreflect.MessageDescriptor, path string) string {
	seen := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > protowire.MaxValidNumber {
			if path == "" {
				return "a field tag is malformed"
			}
			return "a field tag inside " + path + " is malformed"
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		name := "number " + strconv.Itoa(int(num))
		if fd != nil {
			name = string(fd.Name())
			if fd.Cardinality() == protoreflect.Repeated {
				name += "[" + strconv.Itoa(seen[num]) + "]"
				seen[num]++
			}
		}
		if path != "" {
			name = path + "." + name
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return fmt.Sprintf("field %s is truncated or malformed", name)
		}
		if fd != nil && fd.Message() != nil && typ == protowire.BytesType {
			inner, _ := protowire.ConsumeBytes(b[:m])
			if p := locateWireError(inner, fd.Message(), name); p != "" {
				return p
			}
		}
		b = b[m:]
	}
	return ""
}

// missingRequired names the first required field that m or a message
// inside it lacks, as a path such as "table_offsets[0].table_id".
func missingRequired(m protoreflect.Message, path string) string {
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required && !m.Has(fd) {
			return join(string(fd.Name()))
		}
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil || !m.Has(fd) {
			continue
		}
		name := join(string(fd.Name()))
		switch {
		case fd.IsList():
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				if p := missingRequired(l.Get(j).Message(), name+"["+strconv.Itoa(j)+"]"); p != "" {
					return p
				}
			}
		case fd.IsMap():
		default:
			if p := missingRequired(m.Get(fd).Message(), name); p != "" {
				return p
			}
		}
	}
	return ""
}

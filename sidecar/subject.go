package sidecar

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// reqProducerID is the field number of producer_id in the REGISTER, GET and
// DELETE requests of fluss.proto.
const reqProducerID = 1

// producerSubject names the producer a REGISTER, GET or DELETE request is
// about, for the request's log line ("producer_id") and the Observer.
func producerSubject() wire.Subject {
	return wire.Subject{Key: "producer_id", Of: producerIDOf}
}

// producerIDOf returns the producer_id of a request: from the decoded
// message, or read from the body of a request left raw.
func producerIDOf(r *wire.Request) string {
	if m, ok := r.Msg.(interface{ GetProducerId() string }); ok {
		return m.GetProducerId()
	}
	return producerIDOfBody(r.Body)
}

// producerIDOfBody returns the producer_id of a request body without
// decoding the rest: the last occurrence of the field, as a decoder keeps,
// or "" when there is none before the first malformed byte.
func producerIDOfBody(body []byte) string {
	var id []byte
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			break
		}
		body = body[n:]
		m := protowire.ConsumeFieldValue(num, typ, body)
		if m < 0 {
			break
		}
		if num == reqProducerID && typ == protowire.BytesType {
			id, _ = protowire.ConsumeBytes(body[:m])
		}
		body = body[m:]
	}
	return string(id)
}

package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

var goldenFrames = []string{
	"api_versions_request_v0.hex",
	"error_response_req7_code63.hex",
	"server_failure_code_minus1.hex",
	"success_req_minus2_empty.hex",
}

// seedPayloads adds every golden frame, and its payload, to f's corpus.
func seedPayloads(f *testing.F) {
	for _, name := range goldenFrames {
		frame := readHex(f, name)
		f.Add(frame)
		f.Add(frame[lengthFieldSize:])
	}
	f.Add(readHex(f, "error_body_code_minus1.hex"))
	f.Add([]byte{})
	f.Add([]byte{0x16, 0x03, 0x01, 0x00})
	f.Add([]byte("GET / HTTP/1.1\r\n"))
}

func FuzzReadFrame(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 16
		payload, err := ReadFrame(bytes.NewReader(data), limit)
		if err != nil {
			return
		}
		n := int32(binary.BigEndian.Uint32(data))
		if n < 0 || n > limit-lengthFieldSize || int(n) != len(payload) {
			t.Fatalf("accepted length %d with a payload of %d bytes", n, len(payload))
		}
		if !bytes.Equal(payload, data[lengthFieldSize:lengthFieldSize+int(n)]) {
			t.Fatal("payload differs from the input")
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, body, err := ParseRequest(payload)
		if err != nil {
			if len(payload) >= requestHeaderSize {
				t.Fatalf("rejected a %d-byte payload: %v", len(payload), err)
			}
			return
		}
		frame := AppendRequest(nil, h, body)
		if !bytes.Equal(frame[lengthFieldSize:], payload) {
			t.Fatalf("round trip gave % x, want % x", frame[lengthFieldSize:], payload)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := ParseResponse(payload)
		if err != nil {
			return
		}
		_ = r.Err() // decoding any body must not panic
		var again []byte
		switch r.Type {
		case ResponseSuccess:
			again = AppendSuccess(nil, r.RequestID, r.Body)
		case ResponseError, ResponseServerFailure:
			again, _ = beginFrame(nil)
			again = append(again, payload[:len(payload)-len(r.Body)]...)
			again = append(again, r.Body...)
		default:
			t.Fatalf("accepted response type %v", r.Type)
		}
		if !bytes.Equal(again[lengthFieldSize:], payload) {
			t.Fatalf("round trip gave % x, want % x", again[lengthFieldSize:], payload)
		}
	})
}

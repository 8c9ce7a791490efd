package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

func TestGoldenRequest(t *testing.T) {
	golden := readHex(t, "api_versions_request_v0.hex")
	req := &messages.ApiVersionsRequest{
		ClientSoftwareName:    proto.String("fluss"),
		ClientSoftwareVersion: proto.String("0.1.0"),
	}
	wantHeader := RequestHeader{APIKey: 1000, APIVersion: 0, RequestID: 0}

	t.Run("encode", func(t *testing.T) {
		got := AppendRequest(nil, wantHeader, mustMarshal(t, req))
		if !bytes.Equal(got, golden) {
			t.Fatalf("AppendRequest = % x\nwant            % x", got, golden)
		}
	})
	t.Run("decode", func(t *testing.T) {
		payload, err := ReadFrame(bytes.NewReader(golden), 0)
		if err != nil {
			t.Fatal(err)
		}
		h, body, err := ParseRequest(payload)
		if err != nil {
			t.Fatal(err)
		}
		if h != wantHeader {
			t.Fatalf("header = %+v, want %+v", h, wantHeader)
		}
		var got messages.ApiVersionsRequest
		if err := proto.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, req) {
			t.Fatalf("body = %v, want %v", &got, req)
		}
	})
}

func TestGoldenResponses(t *testing.T) {
	tests := []struct {
		file   string
		encode func() []byte
		want   Response
		code   flusserr.Code
		msg    string
	}{
		{
			file:   "error_response_req7_code63.hex",
			encode: func() []byte { return AppendError(nil, 7, flusserr.InvalidProducerID, "") },
			want:   Response{Type: ResponseError, RequestID: 7},
			code:   63,
		},
		{
			file:   "server_failure_code_minus1.hex",
			encode: func() []byte { return AppendServerFailure(nil, flusserr.UnknownServerError, "x") },
			want:   Response{Type: ResponseServerFailure},
			code:   -1,
			msg:    "x",
		},
		{
			file:   "success_req_minus2_empty.hex",
			encode: func() []byte { return AppendSuccess(nil, -2, nil) },
			want:   Response{Type: ResponseSuccess, RequestID: -2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			golden := readHex(t, tt.file)
			if got := tt.encode(); !bytes.Equal(got, golden) {
				t.Fatalf("encoded % x\nwant    % x", got, golden)
			}
			payload, err := ReadFrame(bytes.NewReader(golden), 0)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseResponse(payload)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != tt.want.Type || r.RequestID != tt.want.RequestID {
				t.Fatalf("got %v id %d, want %v id %d", r.Type, r.RequestID, tt.want.Type, tt.want.RequestID)
			}
			err = r.Err()
			if tt.want.Type == ResponseSuccess {
				if err != nil || len(r.Body) != 0 {
					t.Fatalf("success: err %v body % x", err, r.Body)
				}
				return
			}
			fe, ok := flusserr.From(err)
			if !ok || fe.Code != tt.code || fe.Message != tt.msg {
				t.Fatalf("Err() = %#v, want code %d message %q", err, tt.code, tt.msg)
			}
		})
	}
}

func TestGoldenErrorBodyMinus1(t *testing.T) {
	golden := readHex(t, "error_body_code_minus1.hex")
	if got := AppendErrorResponse(nil, flusserr.UnknownServerError, ""); !bytes.Equal(got, golden) {
		t.Fatalf("got % x, want % x", got, golden)
	}
	m := decodeErrorResponse(t, golden)
	if m.GetErrorCode() != -1 || m.ErrorMessage != nil {
		t.Fatalf("decoded %v", m)
	}
}

func lengthPrefix(n int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(n))
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name     string
		input    []byte
		max      int32
		want     []byte
		wantErr  error
		wantKind FrameErrorKind
		wantMsg  string
	}{
		{name: "empty input", input: nil, wantErr: io.EOF},
		{name: "partial length", input: []byte{0, 0}, wantErr: io.ErrUnexpectedEOF},
		{name: "partial payload", input: append(lengthPrefix(5), 1, 2), wantErr: io.ErrUnexpectedEOF},
		{name: "zero length", input: lengthPrefix(0), want: []byte{}},
		{name: "exactly at limit", input: append(lengthPrefix(4), 1, 2, 3, 4), max: 8, want: []byte{1, 2, 3, 4}},
		{name: "one over limit", input: append(lengthPrefix(5), 1, 2, 3, 4, 5), max: 8, wantKind: FrameTooLarge, wantMsg: "length 5 exceeds the maximum of 4"},
		{name: "default limit minus 3", input: lengthPrefix(DefaultMaxFrameSize - 3), wantKind: FrameTooLarge, wantMsg: "maximum of 104857596"},
		{name: "negative", input: lengthPrefix(-1), wantKind: FrameNegativeLength, wantMsg: "negative length -1"},
		{name: "min int32", input: lengthPrefix(-1 << 31), wantKind: FrameNegativeLength},
		{name: "tls client hello", input: []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}, wantKind: FrameTooLarge, wantMsg: "TLS"},
		{name: "http get", input: []byte("GET / HTTP/1.1\r\n"), wantKind: FrameTooLarge, wantMsg: "HTTP"},
		{name: "http post", input: []byte("POST /x HTTP/1.1\r\n"), wantKind: FrameTooLarge, wantMsg: "HTTP"},
		{name: "http put", input: []byte("PUT /x HTTP/1.1\r\n"), wantKind: FrameTooLarge, wantMsg: "HTTP"},
		{name: "http head", input: []byte("HEAD / HTTP/1.1\r\n"), wantKind: FrameTooLarge, wantMsg: "HTTP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFrame(bytes.NewReader(tt.input), tt.max)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.wantKind != 0:
				var fe *FrameError
				if !errors.As(err, &fe) || fe.Kind != tt.wantKind {
					t.Fatalf("err = %v, want FrameError kind %d", err, tt.wantKind)
				}
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("err = %q, want it to contain %q", err, tt.wantMsg)
				}
				if a := fe.Answer(); a.Code != flusserr.UnknownServerError || a.Message != err.Error() {
					t.Fatalf("answer = %d %q, want UNKNOWN_SERVER_ERROR with the error's text", a.Code, a.Message)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tt.want) {
					t.Fatalf("got % x, want % x", got, tt.want)
				}
			}
		})
	}
}

// A frame above the first read chunk is read as data arrives; a large
// length followed by too little data fails without waiting for the rest.
func TestReadFrameLarge(t *testing.T) {
	const n = 3*initialReadChunkSize + 17
	payload := bytes.Repeat([]byte{0xAB, 0xCD, 0xEF}, n/3+1)[:n]
	tests := []struct {
		name    string
		input   []byte
		wantErr error
	}{
		{name: "complete", input: append(lengthPrefix(n), payload...)},
		{name: "truncated", input: append(lengthPrefix(n), payload[:10]...), wantErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// iotest-style one-byte-at-a-time reads would be slow here; a
			// plain reader still exercises the chunked path.
			got, err := ReadFrame(bytes.NewReader(tt.input), 0)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatalf("payload differs (len %d, want %d)", len(got), len(payload))
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		want    RequestHeader
		body    []byte
		wantErr bool
	}{
		{name: "empty", payload: nil, wantErr: true},
		{name: "7 bytes", payload: []byte{3, 0xe8, 0, 0, 0, 0, 0}, wantErr: true},
		{name: "header only", payload: []byte{3, 0xe8, 0, 1, 0, 0, 0, 9}, want: RequestHeader{1000, 1, 9}, body: []byte{}},
		{name: "negative fields", payload: []byte{0xff, 0xff, 0xff, 0xfe, 0x80, 0, 0, 0, 0xAA}, want: RequestHeader{-1, -2, -1 << 31}, body: []byte{0xAA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ParseRequest(tt.payload)
			if tt.wantErr {
				var fe *FrameError
				if !errors.As(err, &fe) || fe.Kind != FrameTooShort || fe.Answer().Code != flusserr.CorruptMessage {
					t.Fatalf("err = %v, want FrameTooShort", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h != tt.want || !bytes.Equal(body, tt.body) {
				t.Fatalf("got %+v % x, want %+v % x", h, body, tt.want, tt.body)
			}
			if again := AppendRequest(nil, h, body); !bytes.Equal(again[4:], tt.payload) {
				t.Fatalf("round trip % x, want % x", again[4:], tt.payload)
			}
		})
	}
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name    string
		payload []byte
		want    Response
		wantErr FrameErrorKind
	}{
		{name: "empty", payload: nil, wantErr: FrameTooShort},
		{name: "success without id", payload: []byte{0, 0, 0}, wantErr: FrameTooShort},
		{name: "error without id", payload: []byte{1}, wantErr: FrameTooShort},
		{name: "type 3", payload: []byte{3, 0, 0, 0, 1}, wantErr: FrameBadResponseType},
		{name: "type -1", payload: []byte{0xff, 0, 0, 0, 1}, wantErr: FrameBadResponseType},
		{name: "success", payload: []byte{0, 0, 0, 0, 1, 0xAA}, want: Response{Type: ResponseSuccess, RequestID: 1, Body: []byte{0xAA}}},
		{name: "error negative id", payload: []byte{1, 0xff, 0xff, 0xff, 0xff, 8, 2}, want: Response{Type: ResponseError, RequestID: -1, Body: []byte{8, 2}}},
		{name: "server failure empty", payload: []byte{2}, want: Response{Type: ResponseServerFailure, Body: []byte{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResponse(tt.payload)
			if tt.wantErr != 0 {
				var fe *FrameError
				if !errors.As(err, &fe) || fe.Kind != tt.wantErr {
					t.Fatalf("err = %v, want kind %d", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != tt.want.Type || got.RequestID != tt.want.RequestID || !bytes.Equal(got.Body, tt.want.Body) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAppendErrorMessage(t *testing.T) {
	tests := []struct {
		name    string
		code    flusserr.Code
		message string
	}{
		{name: "no message", code: 2},
		{name: "message", code: 46, message: "The connection has not completed authentication yet."},
		{name: "negative code", code: -1, message: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := ReadFrame(bytes.NewReader(AppendError([]byte{}, 42, tt.code, tt.message)), 0)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseResponse(payload)
			if err != nil {
				t.Fatal(err)
			}
			m := decodeErrorResponse(t, r.Body)
			if r.RequestID != 42 || m.GetErrorCode() != int32(tt.code) || (m.ErrorMessage != nil) != (tt.message != "") || m.GetErrorMessage() != tt.message {
				t.Fatalf("got id %d %v", r.RequestID, m)
			}
		})
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	prefix := []byte("prefix")
	out := AppendSuccess(append([]byte(nil), prefix...), 1, []byte{9})
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("prefix lost: % x", out)
	}
	payload, err := ReadFrame(bytes.NewReader(out[len(prefix):]), 0)
	if err != nil || !bytes.Equal(payload, []byte{0, 0, 0, 0, 1, 9}) {
		t.Fatalf("payload % x, err %v", payload, err)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
	}{
		{name: "short", in: "abc", max: 3},
		{name: "ascii", in: strings.Repeat("a", 5000), max: maxMessageLen},
		{name: "two-byte runes", in: strings.Repeat("é", 3000), max: maxMessageLen},
		{name: "three-byte runes", in: strings.Repeat("€", 3000), max: maxMessageLen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := truncate(tt.in)
			kept, _, _ := strings.Cut(got, "... (")
			if len(got) > tt.max || !utf8.ValidString(got) || !strings.HasPrefix(tt.in, kept) || len(got) < tt.max-3 ||
				(len(tt.in) > tt.max && !strings.HasSuffix(got, fmt.Sprintf("... (%d bytes in all)", len(tt.in)))) {
				t.Fatalf("truncate gave %d bytes, valid=%v", len(got), utf8.ValidString(got))
			}
		})
	}
}

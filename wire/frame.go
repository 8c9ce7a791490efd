package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// DefaultMaxFrameSize is the default of Fluss's netty.server.max-request-size
// (100 MiB). Like the Fluss server, this package counts the 4-byte length
// field in the limit, so the largest accepted length value is one of these
// minus 4.
const DefaultMaxFrameSize int32 = 104857600

const (
	lengthFieldSize      = 4
	requestHeaderSize    = 8 // api_key, api_version, request_id
	responseHeaderSize   = 5 // type, request_id
	maxMessageLen        = 2048
	initialReadChunkSize = 64 << 10
)

// RequestHeader is the 8-byte header that starts every request payload.
type RequestHeader struct {
	APIKey     messages.Key
	APIVersion int16
	RequestID  int32
}

// ResponseType is the first byte of a response payload.
type ResponseType int8

// The response types of the Fluss protocol.
const (
	ResponseSuccess       ResponseType = 0
	ResponseError         ResponseType = 1
	ResponseServerFailure ResponseType = 2
)

func (t ResponseType) String() string {
	switch t {
	case ResponseSuccess:
		return "SUCCESS"
	case ResponseError:
		return "ERROR"
	case ResponseServerFailure:
		return "SERVER_FAILURE"
	}
	return fmt.Sprintf("ResponseType(%d)", int8(t))
}

// Response is one decoded response payload. RequestID is zero for
// SERVER_FAILURE, which carries none. Body is the response message for
// SUCCESS and an ErrorResponse otherwise; it aliases the payload.
type Response struct {
	Type      ResponseType
	RequestID int32
	Body      []byte
}

// Err decodes the ErrorResponse body of an ERROR or SERVER_FAILURE response.
// It returns nil for SUCCESS.
func (r Response) Err() error {
	if r.Type == ResponseSuccess {
		return nil
	}
	return DecodeError(r.Body)
}

// FrameErrorKind says why a frame could not be read.
type FrameErrorKind int

// The ways a frame can be unreadable.
const (
	// FrameNegativeLength: the length field is negative.
	FrameNegativeLength FrameErrorKind = iota + 1
	// FrameTooLarge: the length field exceeds the configured limit.
	FrameTooLarge
	// FrameTooShort: the payload is shorter than its header.
	FrameTooShort
	// FrameBadResponseType: a response payload has an unknown type byte.
	FrameBadResponseType
)

// FrameError reports a frame that cannot be read. The connection it came
// from is no longer in sync and must be closed (after a SERVER_FAILURE when
// the reader is the server).
type FrameError struct {
	Kind FrameErrorKind
	// Length is the length field (or payload size for FrameTooShort).
	Length int64
	// Limit is the largest accepted length value, for FrameTooLarge.
	Limit int64
	// Hint names the protocol the first bytes look like, e.g. "TLS", or is
	// empty.
	Hint string
	// Detail is extra text, e.g. the bad response type.
	Detail string
}

func (e *FrameError) Error() string {
	var msg string
	switch e.Kind {
	case FrameNegativeLength:
		msg = fmt.Sprintf("invalid frame: negative length %d", e.Length)
	case FrameTooLarge:
		msg = fmt.Sprintf("invalid frame: length %d exceeds the maximum of %d", e.Length, e.Limit)
	case FrameTooShort:
		msg = fmt.Sprintf("invalid frame: payload of %d bytes is shorter than its header", e.Length)
	case FrameBadResponseType:
		msg = "invalid frame: " + e.Detail
	default:
		msg = "invalid frame"
	}
	if e.Hint != "" {
		msg += fmt.Sprintf(" (the bytes look like %s; is the client speaking %s to a Fluss RPC port?)", e.Hint, e.Hint)
	}
	return msg
}

// Answer is the Fluss error a server reports for this frame error in its
// SERVER_FAILURE: a frame too short for its header or of an unknown
// response type is malformed, any other cannot be read at all.
func (e *FrameError) Answer() *flusserr.Error {
	class := apierr.ErrUnreadableFrame
	if e.Kind == FrameTooShort || e.Kind == FrameBadResponseType {
		class = apierr.ErrMalformed
	}
	return (&apierr.Error{Class: class, Detail: e.Error()}).Fluss()
}

// sniff names the protocol that a 4-byte length field really looks like.
func sniff(b [4]byte) string {
	if b[0] == 0x16 && b[1] == 0x03 {
		return "TLS"
	}
	switch string(b[:]) {
	case "GET ", "POST", "PUT ", "HEAD":
		return "HTTP"
	}
	return ""
}

// ReadFrame reads one frame from r and returns its payload (the bytes after
// the length field). The length is checked before anything is allocated: a
// negative length, or one above maxFrameSize-4, gives a *FrameError.
// maxFrameSize counts the length field, like netty.server.max-request-size;
// a value <= 0 means DefaultMaxFrameSize.
//
// ReadFrame returns io.EOF if r ends before the first byte of a frame and
// io.ErrUnexpectedEOF if it ends inside one. Memory grows with the bytes
// actually received, so a peer cannot make it allocate a large buffer by
// sending only a length.
func ReadFrame(r io.Reader, maxFrameSize int32) ([]byte, error) {
	if maxFrameSize <= 0 {
		maxFrameSize = DefaultMaxFrameSize
	}
	var lb [lengthFieldSize]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n, err := checkLength(lb, maxFrameSize)
	if err != nil {
		return nil, err
	}
	return readPayload(r, n)
}

// checkLength decodes a length field and refuses a negative one or one
// above maxFrameSize-4 (maxFrameSize <= 0 means DefaultMaxFrameSize).
func checkLength(lb [lengthFieldSize]byte, maxFrameSize int32) (int32, error) {
	if maxFrameSize <= 0 {
		maxFrameSize = DefaultMaxFrameSize
	}
	n := int32(binary.BigEndian.Uint32(lb[:]))
	limit := int64(maxFrameSize) - lengthFieldSize
	if n < 0 {
		return 0, &FrameError{Kind: FrameNegativeLength, Length: int64(n), Hint: sniff(lb)}
	}
	if int64(n) > limit {
		return 0, &FrameError{Kind: FrameTooLarge, Length: int64(n), Limit: limit, Hint: sniff(lb)}
	}
	return n, nil
}

// readPayload reads the n payload bytes of a frame whose length field has
// been read. A small frame is read into one buffer of its size. A larger
// one is read in chunks of initialReadChunkSize, each allocated as its
// bytes arrive, until half the frame is there; then one buffer of the
// frame's size takes the chunks and the rest. So a length claim alone
// allocates one chunk, memory never exceeds twice what the peer has sent,
// and a whole frame peaks at 1.5 times its size.
func readPayload(r io.Reader, n int32) ([]byte, error) {
	if n <= initialReadChunkSize {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpected(err)
		}
		return buf, nil
	}
	var chunks [][]byte
	got := 0
	for 2*got < int(n) {
		chunk := make([]byte, min(int(n)-got, initialReadChunkSize))
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, unexpected(err)
		}
		chunks = append(chunks, chunk)
		got += len(chunk)
	}
	buf := make([]byte, 0, n)
	for i, c := range chunks {
		buf = append(buf, c...)
		chunks[i] = nil
	}
	if _, err := io.ReadFull(r, buf[got:n]); err != nil {
		return nil, unexpected(err)
	}
	return buf[:n], nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ParseRequest splits a request payload into its header and body. The body
// aliases payload.
func ParseRequest(payload []byte) (RequestHeader, []byte, error) {
	if len(payload) < requestHeaderSize {
		return RequestHeader{}, nil, &FrameError{Kind: FrameTooShort, Length: int64(len(payload))}
	}
	h := RequestHeader{
		APIKey:     messages.Key(binary.BigEndian.Uint16(payload[0:2])),
		APIVersion: int16(binary.BigEndian.Uint16(payload[2:4])),
		RequestID:  int32(binary.BigEndian.Uint32(payload[4:8])),
	}
	return h, payload[requestHeaderSize:], nil
}

// ParseResponse decodes a response payload. Body aliases payload.
func ParseResponse(payload []byte) (Response, error) {
	if len(payload) < 1 {
		return Response{}, &FrameError{Kind: FrameTooShort, Length: 0}
	}
	t := ResponseType(int8(payload[0]))
	switch t {
	case ResponseSuccess, ResponseError:
		if len(payload) < responseHeaderSize {
			return Response{}, &FrameError{Kind: FrameTooShort, Length: int64(len(payload))}
		}
		return Response{
			Type:      t,
			RequestID: int32(binary.BigEndian.Uint32(payload[1:5])),
			Body:      payload[responseHeaderSize:],
		}, nil
	case ResponseServerFailure:
		return Response{Type: t, Body: payload[1:]}, nil
	}
	return Response{}, &FrameError{Kind: FrameBadResponseType, Length: int64(len(payload)),
		Detail: fmt.Sprintf("unknown response type %d", int8(payload[0]))}
}

// beginFrame appends a placeholder length field and returns dst and the
// offset of that field.
func beginFrame(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// endFrame fills in the length field that beginFrame reserved at off. It
// panics if the frame exceeds what an int32 length can describe; callers
// that build frames from untrusted sizes check first.
func endFrame(dst []byte, off int) []byte {
	n := len(dst) - off - lengthFieldSize
	if n > math.MaxInt32 {
		panic("wire: frame larger than 2 GiB")
	}
	binary.BigEndian.PutUint32(dst[off:], uint32(n))
	return dst
}

// AppendRequest appends a request frame to dst.
func AppendRequest(dst []byte, h RequestHeader, body []byte) []byte {
	dst, off := beginFrame(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIKey))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIVersion))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.RequestID))
	dst = append(dst, body...)
	return endFrame(dst, off)
}

// AppendSuccess appends a SUCCESS response frame carrying body to dst.
func AppendSuccess(dst []byte, requestID int32, body []byte) []byte {
	return appendResponse(dst, ResponseSuccess, requestID, body)
}

// appendResponse appends a SUCCESS or ERROR frame with an encoded body.
func appendResponse(dst []byte, t ResponseType, requestID int32, body []byte) []byte {
	dst, off := beginFrame(dst)
	dst = append(dst, byte(t))
	dst = binary.BigEndian.AppendUint32(dst, uint32(requestID))
	dst = append(dst, body...)
	return endFrame(dst, off)
}

// AppendError appends an ERROR response frame to dst. An empty message
// leaves error_message out, so a Fluss client shows the code's default
// message.
func AppendError(dst []byte, requestID int32, code flusserr.Code, message string) []byte {
	dst, off := beginFrame(dst)
	dst = append(dst, byte(ResponseError))
	dst = binary.BigEndian.AppendUint32(dst, uint32(requestID))
	dst = AppendErrorResponse(dst, code, message)
	return endFrame(dst, off)
}

// AppendServerFailure appends a SERVER_FAILURE frame to dst. It has no
// request id; a client fails everything in flight when it reads one.
func AppendServerFailure(dst []byte, code flusserr.Code, message string) []byte {
	dst, off := beginFrame(dst)
	dst = append(dst, byte(ResponseServerFailure))
	dst = AppendErrorResponse(dst, code, message)
	return endFrame(dst, off)
}

// AppendErrorResponse appends the encoded ErrorResponse message for code and
// message to dst, omitting error_message when message is empty. The message
// is sent as valid UTF-8 of at most 2048 bytes (see truncate), whatever the
// caller passed.
func AppendErrorResponse(dst []byte, code flusserr.Code, message string) []byte {
	m := &messages.ErrorResponse{ErrorCode: proto.Int32(int32(code))}
	if message != "" {
		m.ErrorMessage = proto.String(truncate(message))
	}
	out, err := proto.MarshalOptions{}.MarshalAppend(dst, m)
	if err != nil {
		// Unreachable: error_code is always set and strings are not
		// validated in proto2.
		panic("wire: marshal ErrorResponse: " + err.Error())
	}
	return out
}

// DecodeError decodes an ErrorResponse body into a *flusserr.Error. A body
// that does not decode is reported as an error that is not a
// *flusserr.Error.
func DecodeError(body []byte) error {
	var m messages.ErrorResponse
	if err := proto.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("wire: decode ErrorResponse: %w", err)
	}
	return &flusserr.Error{Code: flusserr.Code(m.GetErrorCode()), Message: m.GetErrorMessage()}
}

// truncate makes s fit in an error_message: valid UTF-8 (ill-formed bytes
// become U+FFFD) and at most maxMessageLen bytes, a longer text being cut at
// a character boundary and ended by its full length.
func truncate(s string) string {
	s = flusserr.ValidUTF8(s)
	if len(s) <= maxMessageLen {
		return s
	}
	suffix := fmt.Sprintf("... (%d bytes in all)", len(s))
	cut := maxMessageLen - len(suffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

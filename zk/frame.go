package zk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The few pieces of ZooKeeper's wire protocol (jute) that the SASL
// handshake needs; go-zookeeper encodes everything else. Every packet is a
// big-endian int32 length followed by that many bytes.

// opSASL is ZooDefs.OpCode.sasl: a GetSASLRequest answered by a
// SetSASLResponse.
const opSASL = 102

// handshakeMaxFrame bounds the frames read during the handshake (the
// ConnectResponse and SASL replies, a few hundred bytes in practice) when
// the configured MaxBufferSize is larger.
const handshakeMaxFrame = 64 << 10

// readFrame reads one length-prefixed packet, refusing a length that is
// negative or above max before allocating.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if n < 0 || int64(n) > int64(max) {
		return nil, fmt.Errorf("server sent a packet of %d bytes, outside 0..%d", n, max)
	}
	b := make([]byte, 4+int(n))
	copy(b, hdr[:])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return nil, err
	}
	return b, nil
}

// saslRequest encodes a whole packet: RequestHeader{xid, opSASL} and
// GetSASLRequest{token}.
func saslRequest(xid int32, token []byte) []byte {
	b := make([]byte, 4, 16+len(token))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, opSASL)
	b = binary.BigEndian.AppendUint32(b, uint32(len(token)))
	b = append(b, token...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// reply is a ReplyHeader and, for a SASL reply, the SetSASLResponse token.
type reply struct {
	xid   int32
	zxid  int64
	err   int32
	token []byte // nil when the server sent a null buffer or none
}

// parseSASLReply decodes a packet (length prefix included) holding a
// ReplyHeader and, when err is 0, a SetSASLResponse.
func parseSASLReply(p []byte) (reply, error) {
	b := p[4:]
	if len(b) < 16 {
		return reply{}, fmt.Errorf("short reply of %d bytes", len(b))
	}
	r := reply{
		xid:  int32(binary.BigEndian.Uint32(b)),
		zxid: int64(binary.BigEndian.Uint64(b[4:])),
		err:  int32(binary.BigEndian.Uint32(b[12:])),
	}
	b = b[16:]
	if r.err != 0 || len(b) == 0 {
		return r, nil
	}
	tok, _, err := readBuffer(b)
	if err != nil {
		return reply{}, fmt.Errorf("SASL reply: %w", err)
	}
	r.token = tok
	return r, nil
}

// connectResponse is the part of a ConnectResponse the handshake looks at.
type connectResponse struct {
	timeout   int32
	sessionID int64
}

// live reports whether the server granted a session (an expired one is
// answered with zeros).
func (r connectResponse) live() bool { return r.timeout > 0 && r.sessionID != 0 }

// parseConnectResponse decodes a packet (length prefix included) holding a
// ConnectResponse{protocolVersion, timeOut, sessionId, passwd[, readOnly]}.
func parseConnectResponse(p []byte) (connectResponse, error) {
	b := p[4:]
	if len(b) < 16 {
		return connectResponse{}, fmt.Errorf("short ConnectResponse of %d bytes", len(b))
	}
	r := connectResponse{
		timeout:   int32(binary.BigEndian.Uint32(b[4:])),
		sessionID: int64(binary.BigEndian.Uint64(b[8:])),
	}
	if _, _, err := readBuffer(b[16:]); err != nil {
		return connectResponse{}, fmt.Errorf("ConnectResponse: %w", err)
	}
	return r, nil
}

// readBuffer decodes a jute buffer (int32 length, -1 for null, then the
// bytes) and returns it and the rest of b.
func readBuffer(b []byte) (buf, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("truncated buffer length")
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 {
		return nil, b, nil
	}
	if int64(n) > int64(len(b)) {
		return nil, nil, fmt.Errorf("buffer of %d bytes in %d", n, len(b))
	}
	return b[:n:n], b[n:], nil
}

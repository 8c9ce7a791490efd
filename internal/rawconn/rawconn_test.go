package rawconn

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// frameParse is a parse function for the tests: the request id of a
// SUCCESS or ERROR payload.
func frameParse(payload []byte) (int32, error) {
	if len(payload) < 5 {
		return 0, io.ErrUnexpectedEOF
	}
	return int32(binary.BigEndian.Uint32(payload[1:5])), nil
}

// answerOnce accepts one connection, reads one request frame, answers it
// SUCCESS under the request's id with body, and closes. It hands the
// request frame it read to got.
func answerOnce(t *testing.T, body []byte, got chan<- []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var head [12]byte
		if _, err := io.ReadFull(nc, head[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(head[:4])-8)
		io.ReadFull(nc, req)
		got <- append(head[:], req...)
		answer := binary.BigEndian.AppendUint32(nil, uint32(5+len(body)))
		answer = append(answer, 0)
		answer = append(answer, head[8:12]...)
		nc.Write(append(answer, body...))
	}()
	return ln.Addr().String()
}

// TestSendReadAndClose: a request goes out framed as Fluss frames it, the
// answer comes back whole and parsed, and the server's close is seen.
func TestSendReadAndClose(t *testing.T) {
	got := make(chan []byte, 1)
	c := Dial(t, answerOnce(t, []byte{0xAA}, got), frameParse)
	c.Send(1054, 2, 7, []byte("body"))
	want := []byte{0, 0, 0, 12, 0x04, 0x1e, 0, 2, 0, 0, 0, 7, 'b', 'o', 'd', 'y'}
	if req := <-got; !bytes.Equal(req, want) {
		t.Fatalf("request frame %x, want %x", req, want)
	}
	frame := c.ReadFrame()
	if want := []byte{0, 0, 0, 6, 0, 0, 0, 0, 7, 0xAA}; !bytes.Equal(frame, want) {
		t.Fatalf("answer frame %x, want %x", frame, want)
	}
	c.ExpectClosed("after the one answer")
}

// TestHandshakeAndRead: Handshake accepts a SUCCESS answer under id 0;
// Read parses what follows.
func TestHandshakeAndRead(t *testing.T) {
	got := make(chan []byte, 1)
	c := Dial(t, answerOnce(t, nil, got), frameParse)
	c.Handshake()
	if req := <-got; binary.BigEndian.Uint16(req[4:6]) != 1000 || binary.BigEndian.Uint32(req[8:12]) != 0 {
		t.Fatalf("handshake request %x is not API_VERSIONS with id 0", req[:12])
	}
	if _, err := c.TryRead(); err == nil {
		t.Fatal("a read after the server closed succeeded")
	}
}

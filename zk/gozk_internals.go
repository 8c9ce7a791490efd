package zk

// This file is the one place where zk depends on go-zookeeper's unexported
// internals rather than on its public API. Every declaration below stands
// for a fact of go-zookeeper v1.0.4's source that the compiler cannot
// check; TestGoZookeeperSourcePinned (gozk_pin_test.go) reads that source
// from the module cache and fails, naming the fact, when any of them no
// longer holds, so that an upgrade fails a test instead of corrupting
// memory; TestGozkMirrorsMatchPin checks that the declarations here agree
// with those facts. Nothing outside this file may name a go-zookeeper internal.
//
// Some of what zk relies on is behaviour that no parse can check, so it was
// checked by hand for v1.0.4 and TestGoZookeeperVersionPinned fails on any
// other version until someone checks it again:
//   - requests are written to the server in the order they were queued
//     (SyncGet's sync is answered before its read);
//   - the receiving goroutine hands each watch event to the event callback
//     before it hands any later reply to its caller (OnEvent's promise), and
//     passes events of watches it did not register, such as the persistent
//     ones addWatch sets, to that callback unchanged;
//   - after writing its ConnectRequest, go-zookeeper sends nothing until it
//     has read the ConnectResponse from the connection its dialer returned,
//     so transport.go's connection (given through the public WithDialer
//     option) can hold that response back and run the SASL exchange first.

import (
	"fmt"
	_ "unsafe" // for go:linkname

	gozk "github.com/go-zookeeper/zk"
)

// gozkQueueRequest is go-zookeeper's (*Conn).queueRequest: it queues one
// request on the connection and returns the channel its reply arrives on,
// without waiting, so two calls from one goroutine reach the server in that
// order. SyncGet uses it to pipeline a sync and a getData in one round trip,
// which the public API cannot do (every exported call waits for its reply);
// the read barrier (queueSync, barrier.go) uses it to wait for a sync's
// reply without a goroutine of its own.
//
// The declaration is the method's own signature with the receiver as first
// parameter, which is how Go passes it. Two of its types are go-zookeeper's
// unexported ones and are stood in for here:
//   - the reply channel's element, response, by queuedReply (same fields, in
//     the same order, so the same memory layout);
//   - the callback, func(*request, *responseHeader, error), by a func type
//     of the same shape over *struct{}: a func value is one pointer whatever
//     its parameter types, and go-zookeeper calls the callback only when it
//     is not nil. Only nil is ever passed, so the stand-in types never meet
//     go-zookeeper's values.
//
//go:linkname gozkQueueRequest github.com/go-zookeeper/zk.(*Conn).queueRequest
func gozkQueueRequest(c *gozk.Conn, opcode int32, req any, res any, recvFunc gozkRecvFunc) <-chan queuedReply

// gozkRequest is go-zookeeper's (*Conn).request, which every exported call
// goes through: it queues one request, waits for its reply and decodes it
// into res. AddPersistentRecursiveWatch uses it to send addWatch, which
// go-zookeeper v1.0.4 does not offer. Its stand-in types are those of
// gozkQueueRequest, for the same reasons.
//
//go:linkname gozkRequest github.com/go-zookeeper/zk.(*Conn).request
func gozkRequest(c *gozk.Conn, opcode int32, req any, res any, recvFunc gozkRecvFunc) (int64, error)

// gozkRecvFunc stands in for the type of go-zookeeper's request.recvFunc,
// func(*request, *responseHeader, error); see gozkQueueRequest. Only nil
// may be passed.
type gozkRecvFunc = func(*struct{}, *struct{}, error)

// queuedReply mirrors go-zookeeper's unexported response, the element of
// the channel gozkQueueRequest returns: the zxid of the reply and the error
// it carried (or the decoding error). Its layout must be response's.
type queuedReply struct {
	//lint:ignore U1000 never read here, but response's layout has it first
	zxid int64
	err  error
}

// ZooKeeper's opcodes that zk sends through the two functions above.
// go-zookeeper defines opSync and opGetData with these values (pinned);
// it has no addWatch, and none of its opcodes uses addWatch's value
// (pinned too, so that a future one would be noticed and preferred).
const (
	opGetData  = 4
	opSync     = 9
	opAddWatch = 106 // ZooKeeper 3.6+
)

// The records below are encoded and decoded by go-zookeeper's reflection
// codec, which writes a struct's fields in declaration order, each by its
// kind: bool as one byte, int32 and int64 big-endian, string and []byte as
// a 4-byte length then the bytes, a struct field by field. The pin checks
// that the codec still handles every kind used here, and that the first
// three have the layout of go-zookeeper's own records for the same
// requests (syncRequest, getDataRequest, getDataResponse).

// syncRecord is SyncRequest and SyncResponse: the path.
type syncRecord struct{ Path string }

// getDataRecord is GetDataRequest: the path and whether to set a watch.
type getDataRecord struct {
	Path  string
	Watch bool
}

// getDataReply is GetDataResponse: the data and the znode's stat.
type getDataReply struct {
	Data []byte
	Stat gozk.Stat
}

// addWatchRequest is AddWatchRequest (path, mode); go-zookeeper has no
// record for it.
type addWatchRequest struct {
	Path string
	Mode int32
}

// addWatchResponse is ErrorResponse (err), the body of addWatch's reply.
type addWatchResponse struct {
	Err int32
}

// gozkUnknownCodeFormat is the text go-zookeeper gives an error code that
// it has no error value for (ErrCode.toError): "unknown error: " and the
// code in decimal. Two codes reach zk only that way: Unimplemented (-6),
// the answer of a server older than 3.6 to addWatch, and
// SessionClosedRequireSASLAuth (-124). The pin checks the format and that
// go-zookeeper still maps neither code to an error value.
const gozkUnknownCodeFormat = "unknown error: %v"

// codeUnimplemented is ZooKeeper's UNIMPLEMENTED error code. The other
// code matched through gozkUnknownCodeFormat, codeSessionClosedSASL, is
// declared with the SASL codes (sasl.go).
const codeUnimplemented = -6

// isGozkUnknownCode reports whether err is go-zookeeper's error for the
// ZooKeeper error code code, which it has no error value for.
func isGozkUnknownCode(err error, code int32) bool {
	return err != nil && err.Error() == fmt.Sprintf(gozkUnknownCodeFormat, code)
}

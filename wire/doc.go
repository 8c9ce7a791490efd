// Package wire speaks the framing layer of Apache Fluss's binary RPC
// protocol: length-prefixed frames, the 8-byte request header, the three
// response types, a registry of served API keys and versions (Mux), a
// pipelined server (Server) and a pipelined client (Client).
//
// Every integer in a header is signed big-endian. A frame is an int32 length
// that counts the bytes after itself, followed by a payload:
//
//	request:        int16 api_key, int16 api_version, int32 request_id, body
//	SUCCESS:        int8 0, int32 request_id, response message
//	ERROR:          int8 1, int32 request_id, ErrorResponse
//	SERVER_FAILURE: int8 2, ErrorResponse (no request_id)
//
// Bodies are proto2 messages from package messages.
//
// The server answers every request it can read. An API-level failure becomes
// an ERROR response carrying a Fluss error code and the connection stays
// usable; only an unreadable frame ends the connection, with a
// SERVER_FAILURE written first. Responses are written as handlers complete,
// so they may leave in a different order than the requests arrived; both
// sides match them by request id.
//
// The server is in these files: server.go (configuration, listeners, the
// accept loop and shutdown); conn.go (one connection's construction, run
// and close, and the state its parts share); one file for each part of a
// connection, named after the goroutine that owns it: reader.go (the read
// goroutine: the read loop and idle deadline; drain.go adds what it reads
// at shutdown), requests.go (the requests in flight: slots, budget charges,
// traces of forwarded requests, parked requests) and writer.go (the
// socket's one writer and the Replier); dispatch.go (from a request read to
// its answer: the Mux lookup, an API's Quick path, its Handle, and the
// Forwarder for keys the Mux does not hold); parking.go (requests waiting
// for a Quick.Wait condition, answered together per Waiter); observer.go
// (a request's trace, log line and Observer calls).
//
// A request is served one way: by its API's Handle, which sees a Request
// (the body decoded, or raw with RawBody), after the API's optional Quick
// path (an answer from memory on the reader goroutine, optionally parked
// until a Waiter settles) declined it. A request for a key the Mux does not
// hold is forwarded one way: by the ServerConfig's Forwarder, whose Call
// passes it on from a goroutine of its own, after its optional Try, on the
// reader goroutine, declined it. The server knows no message field: what a
// request is about, for its log line, is the API's Subject.
//
// sockwriter.go holds the one writer of a socket, which a connection's
// writer part and the Client both use.
package wire

// Package messages holds the Go code generated from fluss.proto: the proto2
// messages of the Fluss RPC protocol that the sidecar speaks. Never edit
// fluss.pb.go by hand; run `make generate`. Beside them, apikeys.go states
// the api keys (Key) by hand: the numbers that say which message a request
// carries.
package messages

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative fluss.proto

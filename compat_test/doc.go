// Package compat is the cross-language compatibility suite of the sidecar.
//
// It holds the golden vectors (vectors/: frames, storage bytes, FsPath rules
// and the field-number pin, all written from the spec, not from our
// encoders), small parsers for those files and for messages/fluss.proto, and
// the tests that check our Go encoders against the vectors and run two
// foreign-language clients (python/, java/) against a live sidecar. See
// README.md for running the suite against any sidecar.
package compat

package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// ErrInvalidName reports a producer id or directory name a store refuses:
// one that names no znode or path segment, or, for an offsets file, a
// producer id Fluss refuses. It is remote.ErrInvalidName.
var ErrInvalidName = errors.New("invalid name")

// CheckFileProducerID accepts the producer ids Fluss accepts
// (docs/storage-format.md §7.4): 1 to 200 ASCII letters, digits, '_' or '-'.
// No other id names an offsets file a coordinator could have written.
func CheckFileProducerID(id string) error {
	ok := id != "" && len(id) <= 200
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w: producer id %q", ErrInvalidName, id)
	}
	return nil
}

// CheckZnodeName accepts a producer id that names one znode beneath the
// producers znode: not empty, "." or "..", and without '/' or NUL.
func CheckZnodeName(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("%w: producer id %q is not a znode name", ErrInvalidName, id)
	}
	return nil
}

// CheckSegment accepts a name usable as one path segment of an offsets
// path: not empty, "." or "..", and without '/', '\' or NUL.
func CheckSegment(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// CheckFileRel accepts the part of an offsets path beneath a store's
// producers directory when it names a file in a table directory of a
// producer directory, {producer}/{table}/{file}, each a path segment.
func CheckFileRel(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 {
		return false
	}
	for _, part := range parts {
		if CheckSegment(part) != nil {
			return false
		}
	}
	return true
}

// Ended reports a call whose context has ended as the ZooKeeper client
// does, with the class storeerr.ContextClass gives (ErrTimeout past the
// deadline, ErrUnavailable when canceled) and nothing applied; nil while
// ctx is live. who prefixes the message.
func Ended(ctx context.Context, who string) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	return storeerr.New(storeerr.ContextClass(err), false, fmt.Errorf("%s: %w", who, err))
}

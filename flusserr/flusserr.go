// Package flusserr holds Fluss's error codes as data and the error type that
// handlers return to put a code and message into an ERROR_RESPONSE.
//
// A handler returns *Error for every failure the client should see with a
// specific code; any other Go error is answered as UNKNOWN_SERVER_ERROR (-1).
package flusserr

import (
	"errors"
	"fmt"
)

// Code is a Fluss error code as carried in ErrorResponse.error_code.
type Code int32

// The codes the sidecar produces or interprets by name. Every other code is
// still known to Lookup.
const (
	UnknownServerError     Code = -1
	None                   Code = 0
	NetworkException       Code = 1
	UnsupportedVersion     Code = 2
	CorruptMessage         Code = 3
	RecordTooLarge         Code = 13
	UnknownTableOrBucket   Code = 21
	RequestTimeOut         Code = 25
	StorageException       Code = 26
	AuthenticateException  Code = 46
	SecurityDisabled       Code = 47
	AuthorizationException Code = 48
	RetriableAuthenticate  Code = 51
	InvalidProducerID      Code = 63
	NotCoordinatorLeader   Code = 65
)

type codeInfo struct {
	code      Code
	name      string
	retriable bool
	message   string
}

// Info describes one error code.
type Info struct {
	Code      Code
	Name      string
	Retriable bool
	// DefaultMessage is what a Fluss client shows when error_message is absent.
	DefaultMessage string
}

// Lookup returns what is known about code; ok is false for a code Fluss does
// not define.
func Lookup(code Code) (Info, bool) {
	for _, c := range table {
		if c.code == code {
			return Info{Code: c.code, Name: c.name, Retriable: c.retriable, DefaultMessage: c.message}, true
		}
	}
	return Info{}, false
}

// All returns every known code in ascending order.
func All() []Info {
	out := make([]Info, 0, len(table))
	for _, c := range table {
		out = append(out, Info{Code: c.code, Name: c.name, Retriable: c.retriable, DefaultMessage: c.message})
	}
	return out
}

// Name is the Fluss name of code, or "UNKNOWN(<n>)".
func (c Code) Name() string {
	if i, ok := Lookup(c); ok {
		return i.Name
	}
	return fmt.Sprintf("UNKNOWN(%d)", int32(c))
}

// Error is a Fluss API error: it becomes an ERROR_RESPONSE with this code and
// message. An empty Message means "omit error_message", which a Fluss client
// shows as the code's default message.
type Error struct {
	Code    Code
	Message string
}

// New returns an API error with an explicit message.
func New(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Newf is New with a format string.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		if i, ok := Lookup(e.Code); ok {
			msg = i.DefaultMessage
		}
	}
	return fmt.Sprintf("%s (%d): %s", e.Code.Name(), int32(e.Code), msg)
}

// Retriable reports whether a Fluss client treats the code as retriable.
func (e *Error) Retriable() bool {
	i, ok := Lookup(e.Code)
	return ok && i.Retriable
}

// From extracts the API error from err, if err is or wraps one.
func From(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

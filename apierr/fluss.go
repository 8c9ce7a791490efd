package apierr

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// This file is the one place where failures become Fluss error codes:
// the registry path's, the protocol layer's and the test servers'. Store failures map by storeerr class:
//   - ErrTimeout (or a request that ran out of time) becomes
//     REQUEST_TIME_OUT (25), retriable; the message says whether the
//     outcome is unknown;
//   - ErrUnavailable (ZooKeeper or remote storage unreachable, session
//     lost, throttled) becomes STORAGE_EXCEPTION (26), retriable;
//   - ErrNoSpace becomes STORAGE_EXCEPTION (26): the client may retry once
//     space is freed; the sidecar does not retry it itself;
//   - ErrTooLarge (a write ZooKeeper refused as too large) becomes
//     RECORD_TOO_LARGE (13), not retriable;
//   - ErrPermission, ErrCorrupt, the answer classes (ErrNotFound, ...) and
//     anything unclassified become UNKNOWN_SERVER_ERROR (-1), which
//     clients do not retry;
//   - every one keeps the coordinator's message "Failed to <op> producer
//     offsets for producer <id>" and the cause.
//
// The registry's own classes: ErrInvalidProducerID 63, ErrInvalidOffsets
// -1, ErrBucketOutOfRange 49, ErrSnapshotTooLarge 13 (refused before
// anything is written), ErrSnapshotBroken -1, ErrKeptChanging 26. Around
// it: ErrNotAuthenticated and ErrProtocolMismatch 46, ErrNotAuthorized 48,
// ErrUnknownTable 21, ErrUpstreamGone 1, ErrProxyFailed -1. The protocol
// layer: ErrMalformed 3 (CORRUPT_MESSAGE), ErrUnreadableFrame -1,
// ErrNotServed, ErrServedElsewhere and ErrVersionUnsupported 2
// (UNSUPPORTED_VERSION). ErrInjected: the code it carries. Any other error
// that reaches a client (a handler's failure, a panic) is
// UNKNOWN_SERVER_ERROR with its text (Of).

// prefix is the coordinator's opening of a failed operation's message.
func prefix(op, producerID string) string {
	return "Failed to " + op + " producer offsets for producer " + producerID
}

// unknownNote is said of a failed write whose outcome is unknown.
const unknownNote = " (the outcome is unknown: the operation may have been applied; retry to learn it)"

// keptChangingNote is what ErrKeptChanging says.
const keptChangingNote = "the snapshot kept changing concurrently, retry"

// Answer returns the Fluss API error for a failure of operation op on
// producerID: an *Error in err answers for itself (Fluss), a
// *flusserr.Error passes through, anything else is a store failure of op.
func Answer(op, producerID string, err error) *flusserr.Error {
	var e *Error
	if errors.As(err, &e) {
		return e.Fluss()
	}
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	return (&Error{Op: op, ProducerID: producerID, Err: err}).Fluss()
}

// Of returns the Fluss API error that answers err, when no operation claims
// it: an *Error answers for itself (Fluss), a *flusserr.Error passes
// through unless its code is NONE (not an answer), anything else is
// UNKNOWN_SERVER_ERROR with err's text. Nil for a nil err.
func Of(err error) *flusserr.Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Fluss()
	}
	if fe, ok := flusserr.From(err); ok && fe.Code != flusserr.None {
		return fe
	}
	return flusserr.New(flusserr.UnknownServerError, err.Error())
}

// Fluss returns the Fluss API error, code and message, that answers e; nil
// for a nil e.
func (e *Error) Fluss() *flusserr.Error {
	if e == nil {
		return nil
	}
	pre := prefix(e.Op, e.ProducerID)
	switch e.Class {
	case ErrInvalidProducerID:
		return flusserr.New(flusserr.InvalidProducerID, "Invalid producer ID '"+flusserr.Echo(e.ProducerID)+"': "+e.Detail)
	case ErrInvalidOffsets:
		return flusserr.New(flusserr.UnknownServerError, "Invalid producer offsets for producer "+e.ProducerID+": "+e.Detail)
	case ErrBucketOutOfRange:
		return flusserr.Newf(flusserr.Code(49), "Invalid producer offsets for producer %s: table %d bucket id %d exceeds the maximum %d",
			e.ProducerID, e.TableID, e.BucketID, e.MaxBucketID)
	case ErrSnapshotTooLarge:
		return flusserr.Newf(flusserr.RecordTooLarge, "%s: the snapshot of %d tables is too large for ZooKeeper: %v", pre, e.Tables, e.Err)
	case ErrSnapshotBroken:
		return flusserr.New(flusserr.UnknownServerError, pre+": offsets file not found: "+e.Path)
	case ErrKeptChanging:
		if e.Op == "get" {
			return flusserr.New(flusserr.StorageException, pre+": "+keptChangingNote)
		}
		// Register and delete have always said it as a store that is
		// unavailable, and clients may match either text.
		return flusserr.New(flusserr.StorageException, pre+": storage is unavailable, retry: "+keptChangingNote)
	case ErrNotAuthenticated:
		return flusserr.New(flusserr.AuthenticateException, e.Detail)
	case ErrProtocolMismatch:
		return flusserr.New(flusserr.AuthenticateException, "Authenticate protocol not match: protocol of server is '"+
			e.ServerProtocol+"' while protocol of client is '"+e.ClientProtocol+"'")
	case ErrNotAuthorized:
		// Fluss's message ends with a space.
		return flusserr.New(flusserr.AuthorizationException,
			"Principal "+e.Principal+" have no authorization to operate "+e.Operation+" on resource "+e.Resource+" ")
	case ErrUnknownTable:
		return flusserr.Newf(flusserr.UnknownTableOrBucket,
			"This server %s does not know this table ID %d. This may happen when the table metadata cache in the server is not updated yet.",
			e.Server, e.TableID)
	case ErrUpstreamGone:
		return flusserr.New(flusserr.NetworkException, e.Detail)
	case ErrProxyFailed:
		return flusserr.New(flusserr.UnknownServerError, e.Detail)
	case ErrMalformed:
		return flusserr.New(flusserr.CorruptMessage, e.Detail)
	case ErrUnreadableFrame:
		return flusserr.New(flusserr.UnknownServerError, e.Detail)
	case ErrNotServed:
		return flusserr.Newf(flusserr.UnsupportedVersion, "The server does not support api key %d version %d; the key is not served.",
			e.APIKey, e.APIVersion)
	case ErrServedElsewhere:
		return flusserr.New(flusserr.UnsupportedVersion, e.Detail)
	case ErrVersionUnsupported:
		return flusserr.Newf(flusserr.UnsupportedVersion, "The server does not support %s version %d; supported range is [%d,%d].",
			e.API, e.APIVersion, e.MinVersion, e.MaxVersion)
	case ErrNotLeader:
		return flusserr.New(flusserr.NotCoordinatorLeader, e.Detail)
	case ErrInjected:
		return flusserr.New(e.Code, e.Detail)
	}
	return storeFailure(pre, e.Err)
}

// IsNotLeader reports whether a Fluss answer is ErrNotLeader's code: the
// request was refused by a coordinator that does not lead, before it ran.
func IsNotLeader(e *flusserr.Error) bool {
	return e != nil && e.Code == flusserr.NotCoordinatorLeader
}

// storeAnswers is the code and the text after the prefix for each storeerr
// failure class; any other class answers UNKNOWN_SERVER_ERROR with the
// prefix alone.
var storeAnswers = []struct {
	class error
	code  flusserr.Code
	text  string
}{
	{storeerr.ErrTimeout, flusserr.RequestTimeOut, ": the request timed out"},
	{storeerr.ErrUnavailable, flusserr.StorageException, ": storage is unavailable, retry"},
	{storeerr.ErrNoSpace, flusserr.StorageException, ": remote storage is full"},
	{storeerr.ErrPermission, flusserr.UnknownServerError, ": storage refused access (not retried)"},
	{storeerr.ErrTooLarge, flusserr.RecordTooLarge, ": the snapshot is too large for ZooKeeper"},
	{storeerr.ErrCorrupt, flusserr.UnknownServerError, ": stored data is corrupt"},
}

// storeFailure maps a store failure by its storeerr class (see the top of
// this file).
func storeFailure(pre string, err error) *flusserr.Error {
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	cause := fmt.Sprint(err)
	unknown := ""
	if storeerr.OutcomeUnknown(err) {
		unknown = unknownNote
	}
	class := storeerr.Classify(err)
	if class == nil && errors.Is(err, context.DeadlineExceeded) {
		class = storeerr.ErrTimeout
	}
	for _, a := range storeAnswers {
		if class == a.class {
			return flusserr.New(a.code, pre+a.text+unknown+": "+cause)
		}
	}
	return flusserr.New(flusserr.UnknownServerError, pre+unknown+": "+cause)
}

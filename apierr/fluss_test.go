package apierr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestAnswers pins the Fluss code and the exact message of every class, as
// clients have always been answered: the texts are those the registry and
// the sidecar wrote before the classes existed.
func TestAnswers(t *testing.T) {
	t.Parallel()
	cause := errors.New("the cause")
	notFound := storeerr.Named(storeerr.ErrNotFound, "znode does not exist")
	const (
		reg = "Failed to register producer offsets for producer p"
		get = "Failed to get producer offsets for producer p"
		del = "Failed to delete producer offsets for producer p"
		unk = " (the outcome is unknown: the operation may have been applied; retry to learn it)"
	)
	cases := []struct {
		name string
		err  *apierr.Error
		code flusserr.Code
		msg  string
	}{
		{"invalid id", &apierr.Error{Class: apierr.ErrInvalidProducerID, ProducerID: "a b",
			Detail: "'a b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
			63, "Invalid producer ID 'a b': 'a b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		{"absent id", &apierr.Error{Class: apierr.ErrInvalidProducerID, ProducerID: "null", Detail: "null string is not allowed"},
			63, "Invalid producer ID 'null': null string is not allowed"},
		{"invalid offsets", &apierr.Error{Class: apierr.ErrInvalidOffsets, ProducerID: "p", Detail: "table 3 bucket 1 has negative log_end_offset -2"},
			-1, "Invalid producer offsets for producer p: table 3 bucket 1 has negative log_end_offset -2"},
		{"ttl overflow", &apierr.Error{Class: apierr.ErrInvalidOffsets, ProducerID: "p", Detail: "ttl 9223372036854775807 ms overflows the expiration time"},
			-1, "Invalid producer offsets for producer p: ttl 9223372036854775807 ms overflows the expiration time"},
		{"bucket out of range", &apierr.Error{Class: apierr.ErrBucketOutOfRange, ProducerID: "p", TableID: 3, BucketID: 131072, MaxBucketID: 131071},
			49, "Invalid producer offsets for producer p: table 3 bucket id 131072 exceeds the maximum 131071"},
		{"snapshot too large", &apierr.Error{Class: apierr.ErrSnapshotTooLarge, Op: "register", ProducerID: "p", Tables: 11000,
			Err: storeerr.New(storeerr.ErrTooLarge, false, cause)},
			13, reg + ": the snapshot of 11000 tables is too large for ZooKeeper: the cause"},
		{"snapshot broken", &apierr.Error{Class: apierr.ErrSnapshotBroken, Op: "get", ProducerID: "p", Path: "file:/r/producers/1/p.offsets"},
			-1, get + ": offsets file not found: file:/r/producers/1/p.offsets"},
		{"get kept changing", &apierr.Error{Class: apierr.ErrKeptChanging, Op: "get", ProducerID: "p"},
			26, get + ": the snapshot kept changing concurrently, retry"},
		{"register kept changing", &apierr.Error{Class: apierr.ErrKeptChanging, Op: "register", ProducerID: "p"},
			26, reg + ": storage is unavailable, retry: the snapshot kept changing concurrently, retry"},
		{"delete kept changing", &apierr.Error{Class: apierr.ErrKeptChanging, Op: "delete", ProducerID: "p"},
			26, del + ": storage is unavailable, retry: the snapshot kept changing concurrently, retry"},
		{"timeout", &apierr.Error{Op: "register", ProducerID: "p", Err: storeerr.New(storeerr.ErrTimeout, false, cause)},
			25, reg + ": the request timed out: the cause"},
		{"timeout, outcome unknown", &apierr.Error{Op: "register", ProducerID: "p", Err: storeerr.New(storeerr.ErrTimeout, true, cause)},
			25, reg + ": the request timed out" + unk + ": the cause (outcome unknown)"},
		{"deadline", &apierr.Error{Op: "get", ProducerID: "p", Err: context.DeadlineExceeded},
			25, get + ": the request timed out: context deadline exceeded"},
		{"unavailable", &apierr.Error{Op: "delete", ProducerID: "p", Err: storeerr.New(storeerr.ErrUnavailable, false, cause)},
			26, del + ": storage is unavailable, retry: the cause"},
		{"no space", &apierr.Error{Op: "register", ProducerID: "p", Err: storeerr.New(storeerr.ErrNoSpace, false, cause)},
			26, reg + ": remote storage is full: the cause"},
		{"permission", &apierr.Error{Op: "register", ProducerID: "p", Err: storeerr.New(storeerr.ErrPermission, false, cause)},
			-1, reg + ": storage refused access (not retried): the cause"},
		{"too large", &apierr.Error{Op: "register", ProducerID: "p", Err: storeerr.New(storeerr.ErrTooLarge, false, cause)},
			13, reg + ": the snapshot is too large for ZooKeeper: the cause"},
		{"corrupt", &apierr.Error{Op: "get", ProducerID: "p", Err: storeerr.New(storeerr.ErrCorrupt, false, cause)},
			-1, get + ": stored data is corrupt: the cause"},
		{"answer class", &apierr.Error{Op: "get", ProducerID: "p", Err: fmt.Errorf("zk get /p: %w", notFound)},
			-1, get + ": zk get /p: znode does not exist"},
		{"unclassified", &apierr.Error{Op: "get", ProducerID: "p", Err: cause},
			-1, get + ": the cause"},
		{"not authenticated", &apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: "Authentication failed: Invalid username or password"},
			46, "Authentication failed: Invalid username or password"},
		{"protocol mismatch", &apierr.Error{Class: apierr.ErrProtocolMismatch, ServerProtocol: "PLAINTEXT", ClientProtocol: "PLAIN"},
			46, "Authenticate protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is 'PLAIN'"},
		{"not authorized", &apierr.Error{Class: apierr.ErrNotAuthorized, Principal: "FlussPrincipal{name='bob', type='User'}",
			Operation: "WRITE", Resource: "Resource{type=TABLE, name='db1.audit'}"},
			48, "Principal FlussPrincipal{name='bob', type='User'} have no authorization to operate WRITE on resource Resource{type=TABLE, name='db1.audit'} "},
		{"unknown table", &apierr.Error{Class: apierr.ErrUnknownTable, Server: "coordinator", TableID: 7},
			21, "This server coordinator does not know this table ID 7. This may happen when the table metadata cache in the server is not updated yet."},
		{"upstream gone", &apierr.Error{Class: apierr.ErrUpstreamGone, Detail: "the coordinator connection closed"},
			1, "the coordinator connection closed"},
		{"proxy failed", &apierr.Error{Class: apierr.ErrProxyFailed, Detail: "The proxy could not rewrite the coordinator's GET_METADATA answer: short"},
			-1, "The proxy could not rewrite the coordinator's GET_METADATA answer: short"},
		{"malformed", &apierr.Error{Class: apierr.ErrMalformed, Detail: "invalid frame: payload of 3 bytes is shorter than its header"},
			3, "invalid frame: payload of 3 bytes is shorter than its header"},
		{"unreadable frame", &apierr.Error{Class: apierr.ErrUnreadableFrame, Detail: "invalid frame: negative length -2"},
			-1, "invalid frame: negative length -2"},
		{"not served", &apierr.Error{Class: apierr.ErrNotServed, APIKey: 1055, APIVersion: 0},
			2, "The server does not support api key 1055 version 0; the key is not served."},
		{"served elsewhere", &apierr.Error{Class: apierr.ErrServedElsewhere,
			Detail: "The server does not support PRODUCE_LOG(1014) version 0: it is served by a tablet server."},
			2, "The server does not support PRODUCE_LOG(1014) version 0: it is served by a tablet server."},
		{"version unsupported", &apierr.Error{Class: apierr.ErrVersionUnsupported, API: "GET_PRODUCER_OFFSETS(1054)",
			APIVersion: 3, MinVersion: 0, MaxVersion: 0},
			2, "The server does not support GET_PRODUCER_OFFSETS(1054) version 3; supported range is [0,0]."},
		{"not leader", &apierr.Error{Class: apierr.ErrNotLeader, Detail: "The coordinator server is not the leader."},
			65, "The coordinator server is not the leader."},
		{"injected", &apierr.Error{Class: apierr.ErrInjected, Code: flusserr.NotCoordinatorLeader, Detail: "told to"},
			flusserr.NotCoordinatorLeader, "told to"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := c.err.Fluss()
			if fe.Code != c.code || fe.Message != c.msg {
				t.Errorf("got %d %q\nwant %d %q", fe.Code, fe.Message, c.code, c.msg)
			}
			// Every way of asking gives the same answer.
			wrapped := fmt.Errorf("handler: %w", c.err)
			if got := apierr.Answer("other", "q", wrapped); *got != *fe {
				t.Errorf("Answer: %v, want %v", got, fe)
			}
			if got := apierr.Of(wrapped); *got != *fe {
				t.Errorf("Of: %v, want %v", got, fe)
			}
			if got, ok := flusserr.From(wrapped); !ok || *got != *fe {
				t.Errorf("flusserr.From: %v, %v; want %v", got, ok, fe)
			}
			if c.err.Class != nil && !errors.Is(wrapped, c.err.Class) {
				t.Errorf("errors.Is does not match the class %v", c.err.Class)
			}
		})
	}
}

// TestIsNotLeader: only code 65 is the answer of a coordinator that does
// not lead.
func TestIsNotLeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    *flusserr.Error
		want bool
	}{
		{(&apierr.Error{Class: apierr.ErrNotLeader, Detail: "x"}).Fluss(), true},
		{flusserr.New(65, "raw"), true},
		{flusserr.New(1, "network"), false},
		{flusserr.New(-1, "unknown"), false},
		{nil, false},
	} {
		if got := apierr.IsNotLeader(c.e); got != c.want {
			t.Errorf("IsNotLeader(%v) = %v, want %v", c.e, got, c.want)
		}
	}
}

// TestAnswerOfOtherErrors: an API error passes through; any other error is
// a store failure of the operation named.
func TestAnswerOfOtherErrors(t *testing.T) {
	t.Parallel()
	veto := flusserr.New(flusserr.AuthorizationException, "no")
	if got := apierr.Answer("delete", "p", fmt.Errorf("check: %w", veto)); got != veto {
		t.Errorf("API error: %v, want it unchanged", got)
	}
	got := apierr.Answer("delete", "p", storeerr.New(storeerr.ErrUnavailable, true, errors.New("lost")))
	want := "Failed to delete producer offsets for producer p: storage is unavailable, retry" +
		" (the outcome is unknown: the operation may have been applied; retry to learn it): lost (outcome unknown)"
	if got.Code != flusserr.StorageException || got.Message != want {
		t.Errorf("store failure: %d %q, want 26 %q", got.Code, got.Message, want)
	}
}

// TestOf: what no operation claims. An API error passes through unless its
// code is NONE, which is no answer; anything else, such as a handler's
// failure or a panic, is UNKNOWN_SERVER_ERROR with its text.
func TestOf(t *testing.T) {
	t.Parallel()
	veto := flusserr.New(flusserr.AuthorizationException, "no")
	if got := apierr.Of(fmt.Errorf("check: %w", veto)); got != veto {
		t.Errorf("API error: %v, want it unchanged", got)
	}
	for _, err := range []error{flusserr.New(flusserr.None, "not an error"), errors.New("not an error")} {
		if got := apierr.Of(err); got.Code != flusserr.UnknownServerError || got.Message != err.Error() {
			t.Errorf("Of(%#v) = %d %q, want -1 %q", err, got.Code, got.Message, err.Error())
		}
	}
	if got := apierr.Of(nil); got != nil {
		t.Errorf("Of(nil) = %v, want nil", got)
	}
}

// TestStoreFailureText: a store failure reads as it did when it was
// producer.StoreError, so logs keep their text.
func TestStoreFailureText(t *testing.T) {
	t.Parallel()
	e := &apierr.Error{Op: "get", ProducerID: "p", Err: errors.New("the cause")}
	if got, want := e.Error(), "Failed to get producer offsets for producer p: the cause"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

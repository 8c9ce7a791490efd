package flusserr

import "testing"

func TestTableFacts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code      Code
		name      string
		retriable bool
		message   string
	}{
		{-1, "UNKNOWN_SERVER_ERROR", false, "The server experienced an unexpected error when processing the request."},
		{2, "UNSUPPORTED_VERSION", false, "The version of API is not supported."},
		{3, "CORRUPT_MESSAGE", true, "This message has failed its CRC checksum, exceeds the valid size, has a null key for a primary key table, or is otherwise corrupt."},
		{21, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", true, "The table or bucket does not exist."},
		{46, "AUTHENTICATE_EXCEPTION", false, "Authentication failed."},
		{48, "AUTHORIZATION_EXCEPTION", false, "Authorization failed"},
		{51, "RETRIABLE_AUTHENTICATE_EXCEPTION", false, "Authentication failed with retriable exception. "},
		{63, "INVALID_PRODUCER_ID_EXCEPTION", false, "The client has attempted to perform an operation with an invalid producer ID."},
		{73, "HISTORICAL_PARTITION_THROTTLED", true, "Historical partition request is throttled because too many historical requests are in flight."},
	}
	for _, c := range cases {
		i, ok := Lookup(c.code)
		if !ok {
			t.Fatalf("code %d missing", c.code)
		}
		if i.Name != c.name || i.Retriable != c.retriable || i.DefaultMessage != c.message {
			t.Errorf("code %d: got %+v", c.code, i)
		}
	}
	if n := len(All()); n != 75 {
		t.Errorf("want 75 codes (-1..73), got %d", n)
	}
	if _, ok := Lookup(74); ok {
		t.Error("code 74 must be unknown")
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	e := New(InvalidProducerID, "Invalid producer ID 'a b': x")
	if got := e.Error(); got != "INVALID_PRODUCER_ID_EXCEPTION (63): Invalid producer ID 'a b': x" {
		t.Fatal(got)
	}
	if got := New(CorruptMessage, "").Error(); got == "" || !New(CorruptMessage, "").Retriable() {
		t.Fatal("default message or retriable flag lost")
	}
	if _, ok := From(nil); ok {
		t.Fatal("nil is not an API error")
	}
}

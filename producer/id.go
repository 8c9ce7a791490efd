package producer

import (
	"unicode/utf16"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// MaxIDLength is the longest producer id accepted, in UTF-16 code units (the
// unit Java's String.length counts).
const MaxIDLength = 200

// ValidateID checks a producer id with the rules Fluss applies to table and
// database names, in the same order, and returns the same reason texts. A nil
// id is the wire's "field absent". The error is apierr's answer to
// ErrInvalidProducerID: code 63 (INVALID_PRODUCER_ID_EXCEPTION).
func ValidateID(id *string) *flusserr.Error {
	return checkID(id).Fluss()
}

// checkID is ValidateID's rules; a refusal is of class
// apierr.ErrInvalidProducerID.
func checkID(id *string) *apierr.Error {
	if id == nil {
		return invalidID("null", "null string is not allowed")
	}
	s := *id
	switch {
	case s == "":
		return invalidID(s, "the empty string is not allowed")
	case s == ".":
		return invalidID(s, "'.' is not allowed")
	case s == "..":
		return invalidID(s, "'..' is not allowed")
	case utf16Len(s) > MaxIDLength:
		return invalidID(s, "the length of '"+flusserr.Echo(s)+"' is longer than the max allowed length 200")
	}
	for i := 0; i < len(s); i++ {
		if !idByte(s[i]) {
			return invalidID(s, "'"+flusserr.Echo(s)+"' contains one or more characters other than ASCII alphanumerics, '_' and '-'")
		}
	}
	return nil
}

// invalidID is a refusal of id for reason. The reason quotes the id
// through flusserr.Echo (valid UTF-8 and at most flusserr.MaxEcho
// characters), as apierr quotes the id itself, so that a huge id makes a
// short answer.
func invalidID(id, reason string) *apierr.Error {
	return &apierr.Error{Class: apierr.ErrInvalidProducerID, ProducerID: id, Detail: reason}
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

package flussjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// snapshotVersion is the only producer znode format version.
const snapshotVersion = 1

// EncodeSnapshot returns the producer znode bytes for s, byte-identical to
// what a Fluss coordinator writes: compact UTF-8 JSON without a trailing
// newline, keys in the order version, expiration_time, tables, and each
// table as {"table_id":…,"offsets_path":…}.
//
// The tables are written in the order of s.Tables: the caller chooses it
// (producer orders them as a coordinator's maps would, with package
// javaorder). As in a map, a table id listed twice is written once, at its
// first position, with the last path given for it.
//
// Strings are escaped as Jackson's UTF-8 generator does by default: '"' and
// '\\' are escaped, '/' is not, control characters become \b \t \n \f \r or
// \u00XX (upper-case hex), other characters of the Basic Multilingual Plane
// are raw UTF-8, and a character above U+FFFF is written as its escaped
// UTF-16 surrogate pair (😀 → \uD83D\uDE00; checked against Jackson 2.14).
// Invalid UTF-8 bytes, which a Java string cannot hold, are written as
// U+FFFD.
func EncodeSnapshot(s offsets.Snapshot) []byte {
	ids := make([]int64, 0, len(s.Tables))
	paths := make(map[int64]string, len(s.Tables))
	for _, t := range s.Tables {
		if _, dup := paths[t.TableID]; !dup {
			ids = append(ids, t.TableID)
		}
		paths[t.TableID] = t.OffsetsPath
	}
	b := make([]byte, 0, 64+len(s.Tables)*80)
	b = append(b, `{"version":1,"expiration_time":`...)
	b = strconv.AppendInt(b, s.ExpirationTime, 10)
	b = append(b, `,"tables":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"table_id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"offsets_path":`...)
		b = appendJacksonString(b, paths[id])
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	return b
}

// appendJacksonString appends s as a JSON string the way Jackson's default
// generator writes it.
func appendJacksonString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = utf8.AppendRune(b, utf8.RuneError)
			case r > 0xFFFF:
				hi, lo := utf16.EncodeRune(r)
				b = appendUnicodeEscape(b, uint16(hi))
				b = appendUnicodeEscape(b, uint16(lo))
			default:
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = appendUnicodeEscape(b, uint16(c))
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// appendUnicodeEscape appends \uXXXX with upper-case hex digits.
func appendUnicodeEscape(b []byte, u uint16) []byte {
	const hexUpper = "0123456789ABCDEF"
	return append(b, '\\', 'u', hexUpper[u>>12], hexUpper[u>>8&0xF], hexUpper[u>>4&0xF], hexUpper[u&0xF])
}

// DecodeSnapshot parses producer znode bytes as a Fluss coordinator does:
// version must be 1; version, expiration_time and every table's table_id and
// offsets_path are required; a missing or non-array "tables" reads as no
// tables; unknown keys are ignored. Tables keep the order of the bytes. It
// never panics.
func DecodeSnapshot(data []byte) (offsets.Snapshot, error) {
	if s, ok := decodeCanonicalSnapshot(data); ok {
		return s, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return offsets.Snapshot{}, fmt.Errorf("ProducerOffsets: invalid JSON: %w", err)
	}
	if top == nil {
		return offsets.Snapshot{}, errors.New("ProducerOffsets: not a JSON object")
	}
	version, err := requiredInt(top, "version")
	if err != nil {
		return offsets.Snapshot{}, err
	}
	if version != snapshotVersion {
		//lint:ignore ST1005 Fluss's own message, capital included
		return offsets.Snapshot{}, fmt.Errorf("Unsupported ProducerOffsets version: %d, expected: %d", version, snapshotVersion)
	}
	exp, err := requiredInt(top, "expiration_time")
	if err != nil {
		return offsets.Snapshot{}, err
	}
	s := offsets.Snapshot{ExpirationTime: exp, Tables: []offsets.FileRef{}}
	var tables []json.RawMessage
	if raw, ok := top["tables"]; ok {
		if json.Unmarshal(raw, &tables) != nil {
			tables = nil // not an array (null, object, …): no tables
		}
	}
	for i, raw := range tables {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return offsets.Snapshot{}, fmt.Errorf("ProducerOffsets: tables[%d] is not an object", i)
		}
		id, err := requiredInt(obj, "table_id")
		if err != nil {
			return offsets.Snapshot{}, fmt.Errorf("tables[%d]: %w", i, err)
		}
		rawPath, ok := obj["offsets_path"]
		if !ok || isJSONNull(rawPath) {
			return offsets.Snapshot{}, fmt.Errorf("tables[%d]: ProducerOffsets: missing offsets_path", i)
		}
		var path string
		if err := json.Unmarshal(rawPath, &path); err != nil {
			return offsets.Snapshot{}, fmt.Errorf("tables[%d]: ProducerOffsets: offsets_path is not a string", i)
		}
		s.Tables = append(s.Tables, offsets.FileRef{TableID: id, OffsetsPath: path})
	}
	return s, nil
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// requiredInt reads an integer field. A missing or null field is an error, as
// is a non-number; a fractional number is truncated toward zero, as
// Jackson's asLong/asInt do.
func requiredInt(obj map[string]json.RawMessage, key string) (int64, error) {
	raw, ok := obj[key]
	if !ok || isJSONNull(raw) {
		return 0, fmt.Errorf("ProducerOffsets: missing %s", key)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("ProducerOffsets: %s is not a number", key)
	}
	if v, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, fmt.Errorf("ProducerOffsets: %s is out of range: %s", key, n)
	}
	return int64(f), nil
}

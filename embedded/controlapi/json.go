package controlapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Bounds on what a request may carry and ask.
const (
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes = 64 << 10
	// MaxWait bounds a wait for hits (and DefaultWait is the wait when the
	// request gives none).
	MaxWait     = 5 * time.Minute
	DefaultWait = 30 * time.Second
	// MaxLogLimit bounds the entries of one log page.
	MaxLogLimit = embedded.MaxLogEntries
)

// RuleJSON is a rule as the API reads and writes it.
type RuleJSON struct {
	// APIKey absent: every api key.
	APIKey     *int32 `json:"api_key,omitempty"`
	Action     string `json:"action"`
	Code       int32  `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	Duration   string `json:"duration,omitempty"`
	Count      *int   `json:"count,omitempty"`
	ProducerID string `json:"producer_id,omitempty"`
	ConnID     uint64 `json:"conn_id,omitempty"`

	// Set in answers only.
	ID        uint64 `json:"id,omitempty"`
	Hits      *int   `json:"hits,omitempty"`
	Remaining *int   `json:"remaining,omitempty"`
	Active    *bool  `json:"active,omitempty"`
	Stalled   *int   `json:"stalled,omitempty"`
	Waiting   *int   `json:"waiting,omitempty"`
}

// FieldError is a bad request naming the field at fault; the API answers
// it with 400 (413 for a body too large) and {"error": ..., "field": ...}.
type FieldError struct {
	Field  string
	Reason string
	status int // the answer's status when not 400
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// tooLarge is a body over MaxBodyBytes, answered 413.
func tooLarge() error {
	return &FieldError{Field: "body", Reason: fmt.Sprintf("larger than %d bytes", MaxBodyBytes), status: http.StatusRequestEntityTooLarge}
}

// decodeStrict decodes one JSON object into v: unknown fields, a wrong
// type, trailing data and an oversized body are FieldErrors naming the
// field ("body" for the document as a whole).
func decodeStrict(data []byte, v any) error {
	if len(data) > MaxBodyBytes {
		return tooLarge()
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "body"
			}
			return bad(field, "want a JSON %s, not %s", te.Type.Kind(), te.Value)
		case errors.As(err, &se):
			return bad("body", "not JSON: %v", err)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
			if name == "" {
				return bad("body", "a field without a name")
			}
			return bad(name, "unknown field")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return bad("body", "the JSON ends early")
		}
		return bad("body", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("body", "data after the JSON object")
	}
	return nil
}

func parseDuration(field, s string, limit time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad(field, "%q is not a duration such as 500ms, 2s or 25h", s)
	}
	if d < 0 || d > limit {
		return 0, bad(field, "must be between 0 and %s", limit)
	}
	return d, nil
}

// DecodeRule reads a POST /v1/rules body into an embedded.Rule. count
// absent is 1 (the next request); 0 keeps the rule until removed.
func DecodeRule(data []byte) (embedded.Rule, error) {
	var j RuleJSON
	if err := decodeStrict(data, &j); err != nil {
		return embedded.Rule{}, err
	}
	if j.ID != 0 || j.Hits != nil || j.Remaining != nil || j.Active != nil || j.Stalled != nil || j.Waiting != nil {
		return embedded.Rule{}, bad("id", "id, hits, remaining, active, stalled and waiting are set by the server")
	}
	r := embedded.Rule{
		Key: embedded.AnyKey, Action: embedded.RuleAction(j.Action), Code: flusserr.Code(j.Code),
		Message: j.Message, Count: 1, ProducerID: j.ProducerID, ConnID: j.ConnID,
	}
	if j.APIKey != nil {
		if *j.APIKey < 0 || *j.APIKey > math.MaxInt16 {
			return embedded.Rule{}, bad("api_key", "must be between 0 and %d (absent for every key)", math.MaxInt16)
		}
		r.Key = messages.Key(*j.APIKey)
	}
	if j.Count != nil {
		r.Count = *j.Count
	}
	var err error
	if r.Duration, err = parseDuration("duration", j.Duration, embedded.MaxRuleDuration); err != nil {
		return embedded.Rule{}, err
	}
	if err := r.Validate(); err != nil {
		var fe *embedded.RuleFieldError
		if errors.As(err, &fe) {
			return embedded.Rule{}, bad(fe.Field, "%s", fe.Reason)
		}
		return embedded.Rule{}, err
	}
	return r, nil
}

// EncodeRule is a rule record as the API answers it.
func EncodeRule(info embedded.RuleInfo) RuleJSON {
	j := RuleJSON{
		Action: string(info.Action), Code: int32(info.Code), Message: info.Message,
		ProducerID: info.ProducerID, ConnID: info.ConnID, ID: info.ID,
		Hits: &info.Hits, Remaining: &info.Remaining, Active: &info.Active, Stalled: &info.Stalled,
		Waiting: &info.Waiting,
	}
	if info.Key != embedded.AnyKey {
		k := int32(info.Key)
		j.APIKey = &k
	}
	count := info.Count
	j.Count = &count
	if info.Duration > 0 {
		j.Duration = info.Duration.String()
	}
	return j
}

// WaitJSON is the body of POST /v1/rules/{id}/wait.
type WaitJSON struct {
	Hits    *int   `json:"hits,omitempty"`
	Timeout string `json:"timeout,omitempty"`
}

// DecodeWait reads a wait body: hits absent is 1, timeout absent is
// DefaultWait, at most MaxWait.
func DecodeWait(data []byte) (hits int, timeout time.Duration, err error) {
	var j WaitJSON
	if err := decodeStrict(data, &j); err != nil {
		return 0, 0, err
	}
	hits = 1
	if j.Hits != nil {
		hits = *j.Hits
		if hits < 1 {
			return 0, 0, bad("hits", "must be 1 or more")
		}
	}
	timeout = DefaultWait
	if j.Timeout != "" {
		if timeout, err = parseDuration("timeout", j.Timeout, MaxWait); err != nil {
			return 0, 0, err
		}
	}
	return hits, timeout, nil
}

// ReleaseJSON is the body of POST /v1/release.
type ReleaseJSON struct {
	Rule uint64 `json:"rule,omitempty"`
}

// DecodeRelease reads a release body: rule absent (or 0) releases every
// stalled request.
func DecodeRelease(data []byte) (uint64, error) {
	var j ReleaseJSON
	if err := decodeStrict(data, &j); err != nil {
		return 0, err
	}
	return j.Rule, nil
}

// AdvanceJSON is the body of POST /v1/clock/advance.
type AdvanceJSON struct {
	By     string `json:"by"`
	Expire *bool  `json:"expire,omitempty"`
}

// DecodeAdvance reads an advance body: by is required; expire absent is
// true (delete the snapshots expired at the new time at once).
func DecodeAdvance(data []byte) (by time.Duration, expire bool, err error) {
	var j AdvanceJSON
	if err := decodeStrict(data, &j); err != nil {
		return 0, false, err
	}
	if j.By == "" {
		return 0, false, bad("by", "missing: how far to move the clock, such as 25h")
	}
	if by, err = parseDuration("by", j.By, embedded.MaxClockAdvance); err != nil {
		return 0, false, err
	}
	if by == 0 {
		return 0, false, bad("by", "must be more than 0")
	}
	return by, j.Expire == nil || *j.Expire, nil
}

// LogQuery is what GET /v1/log asks for.
type LogQuery struct {
	Since      uint64
	Limit      int
	APIKey     *messages.Key
	ProducerID string
	ConnID     uint64
}

// DecodeLogQuery reads GET /v1/log's query: since, limit (default and
// bound MaxLogLimit), api_key, producer_id, conn_id.
func DecodeLogQuery(q url.Values) (LogQuery, error) {
	out := LogQuery{Limit: MaxLogLimit}
	for k := range q {
		switch k {
		case "since", "limit", "api_key", "producer_id", "conn_id":
		case "":
			return LogQuery{}, bad("query", "a parameter without a name")
		default:
			return LogQuery{}, bad(k, "unknown query parameter")
		}
	}
	uintParam := func(name string, bits int) (uint64, error) {
		v := q.Get(name)
		if v == "" {
			return 0, nil
		}
		n, err := strconv.ParseUint(v, 10, bits)
		if err != nil {
			return 0, bad(name, "%q is not a number from 0 to %d", v, uint64(1)<<bits-1)
		}
		return n, nil
	}
	var err error
	if out.Since, err = uintParam("since", 63); err != nil {
		return LogQuery{}, err
	}
	if out.ConnID, err = uintParam("conn_id", 63); err != nil {
		return LogQuery{}, err
	}
	if q.Get("limit") != "" {
		n, err := uintParam("limit", 31)
		if err != nil {
			return LogQuery{}, err
		}
		if n == 0 || n > MaxLogLimit {
			return LogQuery{}, bad("limit", "must be between 1 and %d", MaxLogLimit)
		}
		out.Limit = int(n)
	}
	if q.Get("api_key") != "" {
		n, err := uintParam("api_key", 15)
		if err != nil {
			return LogQuery{}, err
		}
		k := messages.Key(n)
		out.APIKey = &k
	}
	out.ProducerID = q.Get("producer_id")
	if len(out.ProducerID) > embedded.MaxProducerIDFilter {
		return LogQuery{}, bad("producer_id", "longer than %d bytes", embedded.MaxProducerIDFilter)
	}
	return out, nil
}

// LogEntryJSON is one request of the log.
type LogEntryJSON struct {
	Seq        uint64 `json:"seq"`
	APIKey     int32  `json:"api_key"`
	API        string `json:"api,omitempty"`
	APIVersion int16  `json:"api_version"`
	RequestID  int32  `json:"request_id"`
	ConnID     uint64 `json:"conn_id"`
	Listener   string `json:"listener"`
	Principal  string `json:"principal,omitempty"`
	ProducerID string `json:"producer_id,omitempty"`
	ArrivedMs  int64  `json:"arrived_ms"`
	AnsweredMs int64  `json:"answered_ms"`
	DurationUs int64  `json:"duration_us"`
	Code       int32  `json:"code"`
	Message    string `json:"message,omitempty"`
	Outcome    string `json:"outcome"`
	Rule       uint64 `json:"rule,omitempty"`
	Action     string `json:"action,omitempty"`
	Applied    *int32 `json:"applied_code,omitempty"`
}

func encodeEntry(e embedded.LogEntry) LogEntryJSON {
	j := LogEntryJSON{
		Seq: e.Seq, APIKey: int32(e.APIKey), API: e.API, APIVersion: e.APIVersion, RequestID: e.RequestID,
		ConnID: e.ConnID, Listener: e.Listener, Principal: e.Principal, ProducerID: e.ProducerID,
		ArrivedMs: e.Arrived.UnixMilli(), AnsweredMs: e.Answered.UnixMilli(),
		DurationUs: e.Answered.Sub(e.Arrived).Microseconds(),
		Code:       int32(e.Code), Message: e.Message, Outcome: e.Outcome, Rule: e.Rule, Action: e.Action,
	}
	if e.Applied != nil {
		c := int32(*e.Applied)
		j.Applied = &c
	}
	return j
}

// BucketJSON, TableJSON and SnapshotJSON show the store.
type BucketJSON struct {
	Bucket       int32  `json:"bucket"`
	PartitionID  *int64 `json:"partition_id,omitempty"`
	LogEndOffset int64  `json:"log_end_offset"`
}

type TableJSON struct {
	TableID int64        `json:"table_id"`
	Buckets []BucketJSON `json:"buckets"`
}

type SnapshotJSON struct {
	ProducerID     string      `json:"producer_id"`
	ExpirationTime int64       `json:"expiration_time"`
	Expired        bool        `json:"expired"`
	Tables         []TableJSON `json:"tables"`
}

// StoreJSON is GET /v1/store's answer.
type StoreJSON struct {
	Snapshots []SnapshotJSON `json:"snapshots"`
	Truncated bool           `json:"truncated"`
	Files     []string       `json:"files"`
}

func encodeStore(l embedded.StoreListing) StoreJSON {
	out := StoreJSON{Snapshots: []SnapshotJSON{}, Truncated: l.Truncated, Files: l.Files}
	if out.Files == nil {
		out.Files = []string{}
	}
	for _, s := range l.Snapshots {
		sj := SnapshotJSON{ProducerID: s.ProducerID, ExpirationTime: s.ExpirationTime, Expired: s.Expired, Tables: []TableJSON{}}
		for _, t := range s.Tables {
			tj := TableJSON{TableID: t.TableID, Buckets: []BucketJSON{}}
			for _, b := range t.Buckets {
				bj := BucketJSON{Bucket: b.BucketID, LogEndOffset: b.LogEndOffset}
				if b.Partitioned {
					p := b.PartitionID
					bj.PartitionID = &p
				}
				tj.Buckets = append(tj.Buckets, bj)
			}
			sj.Tables = append(sj.Tables, tj)
		}
		out.Snapshots = append(out.Snapshots, sj)
	}
	return out
}

// ClockJSON is the clock's state.
type ClockJSON struct {
	NowMs    int64 `json:"now_ms"`
	OffsetMs int64 `json:"offset_ms"`
	Expired  *int  `json:"expired,omitempty"`
}

// ServerJSON says where the Fluss listeners are.
type ServerJSON struct {
	Bootstrap string         `json:"bootstrap"`
	Listeners []ListenerJSON `json:"listeners"`
	Tablet    []ListenerJSON `json:"tablet_listeners"`
}

type ListenerJSON struct {
	Name    string `json:"name"`
	Address string `json:"address"`
}

// ErrorJSON is every 4xx and 5xx answer.
type ErrorJSON struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

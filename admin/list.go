package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// ListEntry is one line of `offsets list`.
type ListEntry struct {
	ProducerID     string  `json:"producer_id"`
	ExpirationTime int64   `json:"expiration_time"`
	ExpiresAt      string  `json:"expires_at"`
	State          string  `json:"state"` // "live", "expired" or "unreadable"
	Tables         []int64 `json:"tables"`
	Buckets        int     `json:"buckets"`
	// Errors says what could not be read: the znode, or offsets files
	// (whose buckets are then not counted).
	Errors []string `json:"errors,omitempty"`
}

// List states.
const (
	StateLive       = "live"
	StateExpired    = "expired"
	StateUnreadable = "unreadable"
)

// ListOptions filter and shape `offsets list`.
type ListOptions struct {
	// ExpiredOnly keeps only expired snapshots.
	ExpiredOnly bool
}

// List calls fn with every snapshot, sorted by producer id. It reads every
// offsets file to count buckets.
func (a *Admin) List(ctx context.Context, opts ListOptions, fn func(ListEntry) error) error {
	return a.each(ctx, true, func(s *Snapshot) error {
		e := ListEntry{ProducerID: s.ProducerID, Tables: []int64{}}
		switch {
		case s.Err != nil:
			e.State = StateUnreadable
			e.Errors = []string{s.Err.Error()}
		case s.Expired:
			e.State = StateExpired
		default:
			e.State = StateLive
		}
		if opts.ExpiredOnly && e.State != StateExpired {
			return nil
		}
		if s.Err == nil {
			e.ExpirationTime = s.ExpirationTime
			e.ExpiresAt = time.UnixMilli(s.ExpirationTime).UTC().Format(time.RFC3339Nano)
			e.Buckets = s.Buckets()
			for _, t := range s.Tables {
				e.Tables = append(e.Tables, t.TableID)
				if t.Err != nil {
					e.Errors = append(e.Errors, t.Err.Error())
				}
			}
		}
		return fn(e)
	})
}

// JSONLines writes one JSON object per line.
type JSONLines struct{ enc *json.Encoder }

// NewJSONLines returns a writer of JSON lines to w.
func NewJSONLines(w io.Writer) *JSONLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONLines{enc: enc}
}

// Write writes v as one line.
func (j *JSONLines) Write(v any) error { return j.enc.Encode(v) }

// ListTable writes list entries as aligned columns for people.
type ListTable struct {
	tw     *tabwriter.Writer
	header bool
}

// NewListTable returns a table writer to w; call Flush at the end.
func NewListTable(w io.Writer) *ListTable {
	return &ListTable{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

// Write adds one row (the header first).
func (t *ListTable) Write(e ListEntry) error {
	if !t.header {
		t.header = true
		if _, err := fmt.Fprintln(t.tw, "PRODUCER_ID\tEXPIRES_AT\tSTATE\tTABLES\tBUCKETS\tERRORS"); err != nil {
			return err
		}
	}
	tables := make([]string, len(e.Tables))
	for i, id := range e.Tables {
		tables[i] = strconv.FormatInt(id, 10)
	}
	tableCol := strings.Join(tables, ",")
	if tableCol == "" {
		tableCol = "-"
	}
	expires := e.ExpiresAt
	if expires == "" {
		expires = "-"
	}
	errCol := "-"
	if len(e.Errors) > 0 {
		errCol = strings.Join(e.Errors, "; ")
	}
	_, err := fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%d\t%s\n", e.ProducerID, expires, e.State, tableCol, e.Buckets, errCol)
	return err
}

// Flush writes the buffered rows.
func (t *ListTable) Flush() error { return t.tw.Flush() }

package controlapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls a control API at Base (http://host:port).
type Client struct {
	Base string
	HTTP *http.Client // nil: http.DefaultClient
}

// StatusError is an answer other than the one expected: its status and
// the error and field the API named.
type StatusError struct {
	Status  int
	Message string
	Field   string
}

func (e *StatusError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("control API: %d: %s (field %s)", e.Status, e.Message, e.Field)
	}
	return fmt.Sprintf("control API: %d: %s", e.Status, e.Message)
}

// Do sends one request with body (nil for none; JSON-encoded unless it is
// a []byte) and decodes the answer into out (nil to ignore it). An answer
// other than want is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		var ej ErrorJSON
		if json.Unmarshal(data, &ej) != nil || ej.Error == "" {
			ej.Error = strings.TrimSpace(string(data))
		}
		return &StatusError{Status: resp.StatusCode, Message: ej.Error, Field: ej.Field}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// AddRule installs a rule.
func (c *Client) AddRule(ctx context.Context, r RuleJSON) (RuleJSON, error) {
	var out RuleJSON
	return out, c.Do(ctx, http.MethodPost, "/v1/rules", r, http.StatusCreated, &out)
}

// Rules lists the rules.
func (c *Client) Rules(ctx context.Context) ([]RuleJSON, error) {
	var out struct {
		Rules []RuleJSON `json:"rules"`
	}
	return out.Rules, c.Do(ctx, http.MethodGet, "/v1/rules", nil, http.StatusOK, &out)
}

// RemoveRule removes one rule.
func (c *Client) RemoveRule(ctx context.Context, id uint64) error {
	return c.Do(ctx, http.MethodDelete, fmt.Sprintf("/v1/rules/%d", id), nil, http.StatusOK, nil)
}

// Wait waits for a rule's hits; reached is false when timeout passed
// first.
func (c *Client) Wait(ctx context.Context, id uint64, hits int, timeout string) (reached bool, rule RuleJSON, err error) {
	var out struct {
		Reached bool     `json:"reached"`
		Rule    RuleJSON `json:"rule"`
	}
	err = c.Do(ctx, http.MethodPost, fmt.Sprintf("/v1/rules/%d/wait", id), WaitJSON{Hits: &hits, Timeout: timeout}, http.StatusOK, &out)
	return out.Reached, out.Rule, err
}

// Release releases the requests stalled by rule (0: all).
func (c *Client) Release(ctx context.Context, rule uint64) (int, error) {
	var out struct {
		Released int `json:"released"`
	}
	return out.Released, c.Do(ctx, http.MethodPost, "/v1/release", ReleaseJSON{Rule: rule}, http.StatusOK, &out)
}

// LogPage is one page of the request log.
type LogPage struct {
	Entries   []LogEntryJSON `json:"entries"`
	NextSince uint64         `json:"next_since"`
	Forgotten uint64         `json:"forgotten"`
}

// Log reads the request log with the query q (url.Values of since, limit,
// api_key, producer_id, conn_id).
func (c *Client) Log(ctx context.Context, q url.Values) (LogPage, error) {
	var out LogPage
	path := "/v1/log"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return out, c.Do(ctx, http.MethodGet, path, nil, http.StatusOK, &out)
}

// Advance moves the clock by a Go duration and expires what it may.
func (c *Client) Advance(ctx context.Context, by string) (ClockJSON, error) {
	var out ClockJSON
	return out, c.Do(ctx, http.MethodPost, "/v1/clock/advance", AdvanceJSON{By: by}, http.StatusOK, &out)
}

// Store lists the store.
func (c *Client) Store(ctx context.Context) (StoreJSON, error) {
	var out StoreJSON
	return out, c.Do(ctx, http.MethodGet, "/v1/store", nil, http.StatusOK, &out)
}

// Reset resets rules, log, clock and store.
func (c *Client) Reset(ctx context.Context) error {
	return c.Do(ctx, http.MethodPost, "/v1/reset", nil, http.StatusOK, nil)
}

// Server says where the Fluss listeners are.
func (c *Client) Server(ctx context.Context) (ServerJSON, error) {
	var out ServerJSON
	return out, c.Do(ctx, http.MethodGet, "/v1/server", nil, http.StatusOK, &out)
}

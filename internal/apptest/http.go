package apptest

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// HTTPGet GETs url (a sidecar's metrics port, or another loopback server
// a test started) and returns the status code and the body; it fails the
// test if there is no answer within 20 s.
func HTTPGet(tb testing.TB, url string) (status int, body string) {
	tb.Helper()
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

package controlapi_test

import (
	"net/url"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
)

// FuzzDecoders: any body is decoded or refused with a field named, never
// a panic; an accepted rule is valid.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"api_key":1054,"action":"error","code":25,"message":"m","count":2}`,
		`{"action":"stall","duration":"2s","producer_id":"p","conn_id":3}`,
		`{"action":"delay","duration":"1ms","count":0}`,
		`{"hits":3,"timeout":"10s"}`, `{"rule":4}`, `{"by":"25h","expire":false}`,
		`{"action":"drop"} {}`, `[`, ``, `null`,
	} {
		f.Add([]byte(s), "since=1&limit=5&api_key=1054&producer_id=p&conn_id=2")
	}
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		check := func(err error) {
			if err == nil {
				return
			}
			fe, ok := err.(*controlapi.FieldError)
			if !ok || fe.Field == "" {
				t.Fatalf("%q: %v is not a FieldError naming a field", body, err)
			}
		}
		r, err := controlapi.DecodeRule(body)
		check(err)
		if err == nil {
			if verr := r.Validate(); verr != nil {
				t.Fatalf("accepted an invalid rule %+v: %v", r, verr)
			}
		}
		_, _, err = controlapi.DecodeWait(body)
		check(err)
		_, err = controlapi.DecodeRelease(body)
		check(err)
		_, _, err = controlapi.DecodeAdvance(body)
		check(err)
		if q, err := url.ParseQuery(query); err == nil {
			_, err = controlapi.DecodeLogQuery(q)
			check(err)
		}
	})
}

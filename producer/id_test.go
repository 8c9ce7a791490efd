package producer

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

func strp(s string) *string { return &s }

func TestValidateID(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 201)
	cases := []struct {
		id   *string
		want string // "" means valid
	}{
		{nil, "Invalid producer ID 'null': null string is not allowed"},
		{strp(""), "Invalid producer ID '': the empty string is not allowed"},
		{strp("."), "Invalid producer ID '.': '.' is not allowed"},
		{strp(".."), "Invalid producer ID '..': '..' is not allowed"},
		{strp(long), "Invalid producer ID '" + long + "': the length of '" + long + "' is longer than the max allowed length 200"},
		{strp("invalid/producer"), "Invalid producer ID 'invalid/producer': 'invalid/producer' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		{strp("invalid@producer"), "Invalid producer ID 'invalid@producer': 'invalid@producer' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		{strp("invalid producer"), "Invalid producer ID 'invalid producer': 'invalid producer' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		{strp("invalid:producer"), "Invalid producer ID 'invalid:producer': 'invalid:producer' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		{strp("é"), "Invalid producer ID 'é': 'é' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
		// 101 astral runes are 202 UTF-16 units: the length rule fires first.
		{strp(strings.Repeat("😀", 101)), "Invalid producer ID '" + strings.Repeat("😀", 101) + "': the length of '" + strings.Repeat("😀", 101) + "' is longer than the max allowed length 200"},
		{strp(strings.Repeat("b", 200)), ""},
		{strp("__internal-job_1"), ""},
		{strp("my-producer-1"), ""},
		{strp("..."), "Invalid producer ID '...': '...' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
	}
	for _, c := range cases {
		err := ValidateID(c.id)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: unexpected %v", *c.id, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("want error %q", c.want)
			continue
		}
		if err.Code != flusserr.InvalidProducerID || err.Message != c.want {
			t.Errorf("got %d %q\nwant 63 %q", err.Code, err.Message, c.want)
		}
	}
}

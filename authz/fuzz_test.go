package authz

import (
	"bytes"
	"testing"
)

func FuzzParsePlainToken(f *testing.F) {
	for _, s := range []string{"\x00u\x00p", "u\x00u\x00p", "a\x00b\x00c", "", "\x00\x00", "\x00u\x00p\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := ParsePlainToken(b)
		if err != nil {
			return
		}
		if tok.User == "" || tok.Password == "" || (tok.AuthzID != "" && tok.AuthzID != tok.User) {
			t.Fatalf("accepted an invalid token %q", b)
		}
		if re := tok.Bytes(); !bytes.Equal(re, b) {
			t.Fatalf("round trip %q != %q", re, b)
		}
	})
}

func FuzzParseJAAS(f *testing.F) {
	f.Add(`org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_a="b" user_c="d\"e";`)
	f.Add(`m optional;`)
	f.Add(`m required a=b; n sufficient c="d";`)
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseJAAS(s)
		if err != nil {
			return
		}
		if len(entries) == 0 {
			t.Fatal("no entries without an error")
		}
		for _, e := range entries {
			if e.LoginModule == "" || e.Flag == "" {
				t.Fatalf("incomplete entry %+v", e)
			}
		}
		PlainUsers(entries)
	})
}

func FuzzDecodeResourceACL(f *testing.F) {
	f.Add([]byte(`{"version":1,"acls":[{"principal_type":"USER","principal_name":"Mike","permission_type":"ALLOW","host":"*","operation":"ALL"}]}`))
	f.Add([]byte(`{"acls":[]}`))
	f.Add([]byte(`{"acls":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		acls, err := DecodeResourceACL(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes and decodes to the same ACLs.
		again, err := DecodeResourceACL(EncodeResourceACL(acls))
		if err != nil || len(again) != len(acls) {
			t.Fatalf("re-decode: %v %v", again, err)
		}
		for i := range acls {
			if again[i] != acls[i] {
				t.Fatalf("entry %d: %+v != %+v", i, again[i], acls[i])
			}
		}
	})
}

package zk

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// TestSASLRequestBytes pins the encoding of a GetSASLRequest packet.
func TestSASLRequestBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		xid   int32
		token []byte
		want  string
	}{
		{"empty first token", 1, []byte{}, "0000000c" + "00000001" + "00000066" + "00000000"},
		{"token", 2, []byte("ab"), "0000000e" + "00000002" + "00000066" + "00000002" + "6162"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hex.EncodeToString(saslRequest(tt.xid, tt.token)); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestReadFrame checks that lengths outside the bound are refused before
// anything is allocated or read, and that good frames come back whole.
func TestReadFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, errHas string
	}{
		{"ok", "00000002abcd", "00000002abcd", ""},
		{"empty body", "00000000", "00000000", ""},
		{"negative", "ffffffff", "", "outside"},
		{"too large", "00000011" + strings.Repeat("00", 17), "", "outside"},
		{"huge", "7fffffff", "", "outside"},
		{"truncated body", "00000004ab", "", "EOF"},
		{"truncated length", "0000", "", "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := hex.DecodeString(tt.in)
			got, err := readFrame(bytes.NewReader(in), 16)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want one containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil || hex.EncodeToString(got) != tt.want {
				t.Fatalf("got %x, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestParseReplies decodes ConnectResponse and SASL reply packets.
func TestParseReplies(t *testing.T) {
	t.Parallel()
	dec := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	// protocolVersion 0, timeout 4000, session 0x1234, passwd of 2 bytes, readOnly false.
	cr, err := parseConnectResponse(dec("00000017" + "00000000" + "00000fa0" + "0000000000001234" + "00000002" + "abcd" + "00"))
	if err != nil || !cr.live() || cr.sessionID != 0x1234 || cr.timeout != 4000 {
		t.Fatalf("ConnectResponse = %+v, %v", cr, err)
	}
	expired, err := parseConnectResponse(dec("00000014" + "00000000" + "00000000" + "0000000000000000" + "00000000"))
	if err != nil || expired.live() {
		t.Fatalf("expired ConnectResponse = %+v, %v", expired, err)
	}
	if _, err := parseConnectResponse(dec("00000004" + "00000000")); err == nil {
		t.Fatal("short ConnectResponse accepted")
	}
	if _, err := parseConnectResponse(dec("00000014" + "00000000" + "00000fa0" + "0000000000001234" + "00000009")); err == nil {
		t.Fatal("ConnectResponse with an overlong password accepted")
	}

	r, err := parseSASLReply(dec("00000016" + "00000002" + "0000000000000000" + "00000000" + "00000002" + "6869"))
	if err != nil || r.xid != 2 || r.err != 0 || string(r.token) != "hi" {
		t.Fatalf("reply = %+v, %v", r, err)
	}
	r, err = parseSASLReply(dec("00000014" + "00000001" + "0000000000000000" + "00000000" + "ffffffff"))
	if err != nil || r.token != nil {
		t.Fatalf("null token reply = %+v, %v", r, err)
	}
	r, err = parseSASLReply(dec("00000014" + "00000001" + "0000000000000000" + "ffffff8d" + "ffffffff"))
	if err != nil || r.err != codeAuthFailed {
		t.Fatalf("error reply = %+v, %v", r, err)
	}
	if _, err := parseSASLReply(dec("00000008" + "0000000100000000")); err == nil {
		t.Fatal("short reply accepted")
	}
}

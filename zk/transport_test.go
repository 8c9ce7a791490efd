package zk

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
)

// TestTLSRefusal classifies TLS failures: certificate and protocol
// refusals are definitive, I/O failures are retried.
func TestTLSRefusal(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" for a failure worth retrying
	}{
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, "not signed by a trusted authority"},
		{"host name", &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "zk"}}, "does not match the host name"},
		{"expired", &tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}, "is not valid"},
		{"other verification", &tls.CertificateVerificationError{Err: errors.New("x")}, "could not be verified"},
		{"not tls", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "does not speak TLS"},
		{"alert", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, "refused the TLS handshake"},
		{"wrapped alert", fmt.Errorf("read: %w", &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}), "refused the TLS handshake"},
		{"eof", io.EOF, ""},
		{"reset", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, ""},
		{"deadline", context.DeadlineExceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tlsRefusal(tt.err)
			if (tt.want == "") != (got == "") || (tt.want != "" && !strings.Contains(got, tt.want)) {
				t.Fatalf("tlsRefusal = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzHandshakeDecoders feeds arbitrary packets to the handshake's
// decoders: they must not panic, and a decoded token lies inside the
// packet.
func FuzzHandshakeDecoders(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x16\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02hi"))
	f.Add([]byte("\x00\x00\x00\x14\x00\x00\x00\x00\x00\x00\x0f\xa0\x00\x00\x00\x00\x00\x00\x12\x34\xff\xff\xff\xff"))
	f.Add([]byte("\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := readFrame(bytes.NewReader(b), 1<<16)
		if err != nil {
			return
		}
		_, _ = parseConnectResponse(p)
		r, err := parseSASLReply(p)
		if err == nil && len(r.token) > len(p) {
			t.Fatalf("token of %d bytes from a packet of %d", len(r.token), len(p))
		}
	})
}

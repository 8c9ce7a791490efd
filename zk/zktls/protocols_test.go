package zktls_test

import (
	"crypto/tls"
	"slices"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// TestBuildProtocols: protocol, enabled protocols and cipher suites map to
// Go's version range and suites as ZooKeeper 3.8 on Java reads them.
func TestBuildProtocols(t *testing.T) {
	const (
		gcm128   = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
		tls13AES = "TLS_AES_128_GCM_SHA256"
	)
	cases := []struct {
		name      string
		protocol  string
		enabled   []string
		ciphers   []string
		min, max  uint16
		suites    int    // number of TLS 1.2 suites
		firstName string // first suite, if any
	}{
		{"3.8 defaults", "", nil, nil, tls.VersionTLS12, tls.VersionTLS12, 10, gcm128},
		{"both enabled, the default suites stay at 1.2", "TLS", []string{"TLSv1.2", "TLSv1.3"}, nil, tls.VersionTLS12, tls.VersionTLS12, 10, gcm128},
		{"both enabled with both kinds of suite", "tls", []string{"TLSv1.2", "TLSv1.3"}, []string{tls13AES, gcm128}, tls.VersionTLS12, tls.VersionTLS13, 1, gcm128},
		{"protocol in lower case", "tlsv1.2", nil, nil, tls.VersionTLS12, tls.VersionTLS12, 10, gcm128},
		{"TLSv1.3 with a 1.3 suite", "TLSv1.3", nil, []string{tls13AES}, tls.VersionTLS13, tls.VersionTLS13, 0, ""},
		{"enabled protocols win over the protocol", "TLSv1.2", []string{"TLSv1.3", "TLSv1.2"}, []string{tls13AES, gcm128}, tls.VersionTLS12, tls.VersionTLS13, 1, gcm128},
		{"1.2 and 1.3 enabled, 1.3 suites only", "", []string{"TLSv1.2", "TLSv1.3"}, []string{tls13AES}, tls.VersionTLS13, tls.VersionTLS13, 0, ""},
		{"renegotiation signal is skipped", "", nil, []string{"TLS_EMPTY_RENEGOTIATION_INFO_SCSV", gcm128}, tls.VersionTLS12, tls.VersionTLS12, 1, gcm128},
		{"a CBC suite Go marks insecure", "", nil, []string{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"}, tls.VersionTLS12, tls.VersionTLS12, 1, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := zktls.Build(zktls.Settings{Protocol: c.protocol, EnabledProtocols: c.enabled, CipherSuites: c.ciphers, HostnameVerification: true})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MinVersion != c.min || cfg.MaxVersion != c.max {
				t.Errorf("versions %s..%s, want %s..%s", tls.VersionName(cfg.MinVersion), tls.VersionName(cfg.MaxVersion),
					tls.VersionName(c.min), tls.VersionName(c.max))
			}
			if len(cfg.CipherSuites) != c.suites {
				t.Errorf("%d suites, want %d", len(cfg.CipherSuites), c.suites)
			}
			if c.firstName != "" && (len(cfg.CipherSuites) == 0 || tls.CipherSuiteName(cfg.CipherSuites[0]) != c.firstName) {
				t.Errorf("first suite is not %s", c.firstName)
			}
			if c.suites == 0 && (cfg.CipherSuites == nil || len(cfg.CipherSuites) != 0) {
				t.Errorf("TLS 1.3 only: want an empty, non-nil suite list, got %v", cfg.CipherSuites)
			}
			if slices.Contains(cfg.CipherSuites, tls.TLS_AES_128_GCM_SHA256) {
				t.Errorf("a TLS 1.3 suite is in the TLS 1.2 list")
			}
		})
	}
}

package zktls

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// versionRange is an inclusive range of TLS versions.
type versionRange struct{ min, max uint16 }

// versions is the range of TLS versions the protocol settings enable, as
// ZooKeeper 3.8 reads them: the protocol defaults to TLSv1.2, the enabled
// protocols to the protocol alone.
func versions(protocol string, enabled []string) (versionRange, error) {
	if protocol == "" {
		protocol = "TLSv1.2"
	}
	// Java looks the SSLContext protocol up case-insensitively.
	var ctx versionRange
	switch strings.ToUpper(protocol) {
	case "TLS":
		ctx = versionRange{tls.VersionTLS12, tls.VersionTLS13}
	case "TLSV1.2":
		ctx = versionRange{tls.VersionTLS12, tls.VersionTLS12}
	case "TLSV1.3":
		ctx = versionRange{tls.VersionTLS13, tls.VersionTLS13}
	case "TLSV1", "TLSV1.1", "SSL", "SSLV3":
		return versionRange{}, fmt.Errorf("zktls: %s %s is not supported (use TLSv1.2 or TLSv1.3)", propProtocol, protocol)
	default:
		return versionRange{}, fmt.Errorf("zktls: %s %q is not a TLS protocol (TLSv1.2, TLSv1.3 or TLS)", propProtocol, protocol)
	}
	if len(enabled) == 0 {
		if strings.EqualFold(protocol, "TLS") {
			// ZooKeeper 3.8 then enables the protocol name itself, which
			// Java refuses: "Unsupported protocolTLS".
			return versionRange{}, fmt.Errorf("zktls: %s %s needs %s (TLSv1.2, TLSv1.3): "+
				"ZooKeeper 3.8 would enable %q itself, which Java refuses", propProtocol, protocol, propEnabled, protocol)
		}
		return ctx, nil
	}
	r := versionRange{min: tls.VersionTLS13 + 1}
	for _, name := range enabled {
		var v uint16
		switch name { // Java matches these names exactly
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		case "TLSv1", "TLSv1.1", "SSLv3":
			return versionRange{}, fmt.Errorf("zktls: %s: %s is not supported (use TLSv1.2 or TLSv1.3)", propEnabled, name)
		default:
			return versionRange{}, fmt.Errorf("zktls: %s: %q is not a TLS protocol (TLSv1.2 or TLSv1.3)", propEnabled, name)
		}
		r.min, r.max = min(r.min, v), max(r.max, v)
	}
	return r, nil
}

// suiteChoice is the cipher suites and version range a config ends with.
type suiteChoice struct {
	ids      []uint16
	min, max uint16
}

// defaultCipherSuites is ZooKeeper 3.8's list for Java 9 and later.
func defaultCipherSuites() []string {
	return []string{
		"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
		"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	}
}

// goLacks are suites of ZooKeeper's default list that Go does not
// implement; the default list drops them, a configured list may not name
// them.
func goLacks(name string) bool {
	return name == "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384" || name == "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"
}

// cipherSuites maps Java cipher suite names to Go's and narrows the
// version range to the versions those suites allow, as Java does.
func cipherSuites(names []string, v versionRange) (suiteChoice, error) {
	configured := len(names) > 0
	if !configured {
		names = defaultCipherSuites()
	}
	byName := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s
	}
	var out suiteChoice
	has13 := false
	for _, name := range names {
		if name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
			continue // a signal, not a suite; Go handles renegotiation info itself
		}
		s, ok := byName[name]
		if !ok {
			if !configured && goLacks(name) {
				continue
			}
			return suiteChoice{}, fmt.Errorf("zktls: %s: %q is not a cipher suite Go supports", propCiphers, name)
		}
		for _, sv := range s.SupportedVersions {
			switch sv {
			case tls.VersionTLS13:
				has13 = true
			case tls.VersionTLS12:
				out.ids = append(out.ids, s.ID)
			}
		}
	}
	out.min, out.max = v.min, v.max
	if out.max == tls.VersionTLS13 && !has13 {
		out.max = tls.VersionTLS12
	}
	if out.min == tls.VersionTLS12 && len(out.ids) == 0 {
		out.min = tls.VersionTLS13
	}
	if out.min > out.max {
		return suiteChoice{}, fmt.Errorf("zktls: %s names no cipher suite for the enabled protocols (%s)", propCiphers, versionNames(v))
	}
	if out.ids == nil {
		out.ids = []uint16{} // TLS 1.3 only: no TLS 1.2 suite
	}
	return out, nil
}

// versionNames spells a version range the Java way.
func versionNames(v versionRange) string {
	if v.min == v.max {
		return tls.VersionName(v.min)
	}
	return tls.VersionName(v.min) + " to " + tls.VersionName(v.max)
}

package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func TestIsSensitive(t *testing.T) {
	for key, want := range map[string]bool{
		"s3.secret-key": true, "s3.access-key": true, "fs.oss.accessKeySecret": true, "fs.oss.accessKeyId": true,
		"security.sasl.plain.jaas.config": true, "security.sasl.plain.credentials": true, "client.security.sasl.password": true, "fs.azure.account.key.x.dfs.core.windows.net": true,
		"azure.account.key": true, "fs.obs.access.key": true, "obs.secret.key": true, "fs.cosn.userinfo.secretKey": true, "fs.cosn.userinfo.secretId": true,
		"fs.gs.auth.service.account.json.keyfile": false, "sidecar.azure.endpoint": false,
		"zookeeper.address": false, "remote.data.dir": false, "metrics.reporters": false, "security.sasl.enabled.mechanisms": false,
	} {
		if got := IsSensitive(key); got != want {
			t.Errorf("IsSensitive(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestLogStartup: one line with the build and the effective configuration
// (defaults included), secrets redacted, in hclog's JSON when asked.
func TestLogStartup(t *testing.T) {
	c := config.New()
	for k, v := range map[string]string{
		"zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "s3://b/fluss", "s3.secret-key": "TOPSECRET",
		"s3.access-key": "AKIAEXAMPLE", "metrics.reporters": "prometheus", "sidecar.log.format": "json",
		"security.sasl.plain.jaas.config": `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_a="pw-a";`,
		"bind.listeners":                  "FLUSS://127.0.0.1:9123,CLIENT://127.0.0.1:9124", "security.protocol.map": "CLIENT:sasl",
		"security.sasl.enabled.mechanisms": "PLAIN", "some.unknown.key": "kept",
	} {
		c.Set(k, v)
	}
	s, err := FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	LogStartup(NewLogger("fluss-sidecar", "info", s.Ops.LogFormat, &buf), c, s)
	line := buf.String()
	for _, secret := range []string{"TOPSECRET", "AKIAEXAMPLE", "pw-a"} {
		if strings.Contains(line, secret) {
			t.Fatalf("secret %q logged: %s", secret, line)
		}
	}
	var rec struct {
		Message string            `json:"@message"`
		Version string            `json:"version"`
		Go      string            `json:"go_version"`
		Config  map[string]string `json:"config"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &rec); err != nil {
		t.Fatalf("not one JSON line: %v\n%s", err, line)
	}
	want := map[string]string{
		"s3.secret-key": Redacted, "s3.access-key": Redacted, "security.sasl.plain.jaas.config": Redacted,
		"coordinator.producer-offsets.ttl": "24h0m0s", "metrics.reporter.prometheus.port": "9249",
		"zookeeper.path.root": "/fluss", "some.unknown.key": "kept", "sidecar.log.format": "json",
	}
	for k, v := range want {
		if rec.Config[k] != v {
			t.Errorf("config[%q] = %q, want %q", k, rec.Config[k], v)
		}
	}
	if rec.Message != "starting fluss-sidecar" || rec.Version == "" || rec.Go == "" {
		t.Errorf("start-up line %+v", rec)
	}
}

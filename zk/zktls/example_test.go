package zktls_test

import (
	"crypto/tls"
	"log"
	"net"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// A transport builds the config once from the properties file's settings
// and, per server, dials a clone naming the host it dials.
func ExampleBuild() {
	cfg, err := zktls.Build(zktls.Settings{
		KeyStore:             zktls.Store{Location: "/etc/fluss/zk-client.p12", PasswordPath: "/etc/fluss/zk-client.pass"},
		TrustStore:           zktls.Store{Location: "/etc/fluss/zk-trust.jks", Password: "changeit"},
		HostnameVerification: true,
	})
	if err != nil {
		log.Fatal(err) // one line naming the property and file at fault
	}
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			c.ServerName = host
		}
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, c)
	}
	conn, _, err := gozk.Connect([]string{"zk1.example:2281"}, 60*time.Second, gozk.WithDialer(dial))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
}

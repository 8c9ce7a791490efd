package zk

import (
	"crypto/tls"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults, as in Fluss's zookeeper.* options.
const (
	DefaultRoot              = "/fluss"
	DefaultSessionTimeout    = 60 * time.Second
	DefaultConnectionTimeout = 15 * time.Second
	// DefaultMaxBufferSize is zookeeper.client.max-buffer-size's default.
	DefaultMaxBufferSize = 100 * 1024 * 1024
	// DefaultServerMaxBuffer is ZooKeeper's default jute.maxbuffer.
	DefaultServerMaxBuffer = 0xfffff
)

// Config is how to reach ZooKeeper; the fields follow Fluss's options of the
// same meaning.
type Config struct {
	// Address is zookeeper.address: a comma-separated host:port list.
	Address string
	// Root is zookeeper.path.root (default "/fluss"); see NormalizeRoot.
	Root string
	// SessionTimeout is zookeeper.client.session-timeout (default 60 s).
	SessionTimeout time.Duration
	// ConnectionTimeout is zookeeper.client.connection-timeout (default
	// 15 s): how long Connect waits for the first session.
	ConnectionTimeout time.Duration
	// MaxBufferSize is zookeeper.client.max-buffer-size (default 100 MiB):
	// the largest packet the client sends or accepts.
	MaxBufferSize int
	// ServerMaxBuffer is the ZooKeeper servers' jute.maxbuffer (default
	// 1 MiB - 1), which clients cannot query: a request larger than it
	// makes the server drop the connection, failing every request of the
	// session. Writes larger than min(MaxBufferSize, ServerMaxBuffer) are
	// refused before they are sent.
	ServerMaxBuffer int
	// Logger receives the client's logs under the sub-logger "zk"; nil
	// discards them.
	Logger hclog.Logger
	// Observer, if set, is told about session changes.
	Observer SessionObserver
	// TLS, if set, makes every connection TLS (ZooKeeper's
	// secureClientPort). Per server the config is cloned and ServerName
	// set to the host of "host:port" unless already set.
	TLS *tls.Config
	// SASL, if set, authenticates every new connection before any other
	// request is sent.
	SASL *SASL
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.ConnectionTimeout <= 0 {
		c.ConnectionTimeout = DefaultConnectionTimeout
	}
	if c.MaxBufferSize <= 0 {
		c.MaxBufferSize = DefaultMaxBufferSize
	}
	if c.ServerMaxBuffer <= 0 {
		c.ServerMaxBuffer = DefaultServerMaxBuffer
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// servers splits Address into its non-blank host:port entries.
func (c Config) servers() []string {
	var out []string
	for _, s := range strings.Split(c.Address, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Validate reports a configuration that Connect cannot use.
func (c Config) Validate() error {
	if len(c.servers()) == 0 {
		//lint:ignore ST1005 Fluss's own message, capital included
		return errors.New("No valid ZooKeeper quorum has been specified. " +
			"You can specify the quorum via the configuration key 'zookeeper.address'")
	}
	if c.SessionTimeout < 0 {
		return errors.New("zookeeper.client.session-timeout must not be negative")
	}
	if c.MaxBufferSize < 0 {
		return errors.New("zookeeper.client.max-buffer-size must not be negative")
	}
	if c.ServerMaxBuffer < 0 {
		return errors.New("sidecar.zookeeper.jute-maxbuffer must not be negative")
	}
	if c.ConnectionTimeout < 0 {
		return errors.New("zookeeper.client.connection-timeout must not be negative")
	}
	if c.SASL != nil && c.SASL.New == nil {
		return errors.New("zk: SASL is set without an exchange (SASL.New)")
	}
	return nil
}

// NormalizeRoot turns zookeeper.path.root into the prefix of every znode
// path, as Fluss does: leading and trailing '/' are trimmed and one '/' is
// put in front ("fluss/" → "/fluss", "/a/b/" → "/a/b"). "/" (or a root made
// only of slashes, or empty) gives "/", which means no prefix. Config
// applies the default "/fluss" before this, to an empty Root.
func NormalizeRoot(root string) string {
	return "/" + strings.Trim(root, "/")
}

package zk

import (
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
	// 15 s): how long Connect waits for the first session, and how long a
	// ProducerStore keeps trying to learn the outcome of an interrupted
	// create.
	ConnectionTimeout time.Duration
	// Logger receives the client's logs under the sub-logger "zk"; nil
	// discards them.
	Logger hclog.Logger
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
		return errors.New("No valid ZooKeeper quorum has been specified. " +
			"You can specify the quorum via the configuration key 'zookeeper.address'")
	}
	if c.SessionTimeout < 0 {
		return errors.New("zookeeper.client.session-timeout must not be negative")
	}
	if c.ConnectionTimeout < 0 {
		return errors.New("zookeeper.client.connection-timeout must not be negative")
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

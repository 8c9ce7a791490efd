package app

import (
	"crypto/tls"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
	"github.com/fluss-sidecar/fluss-sidecar/zk/clientconfig"
)

// ZooKeeperSecurity is how the sidecar authenticates to ZooKeeper and
// protects the connection, read from zookeeper.client.config-path and the
// JAAS file (README "Secured ZooKeeper").
type ZooKeeperSecurity struct {
	Client clientconfig.Settings
	// JAASFrom says where the JAAS file's path came from, "" when none.
	JAASFrom string
	TLS      *tls.Config
	SASL     *zk.SASL
}

// jvmOptions returns the -Dkey=value options Fluss's launch script would
// give a coordinator's JVM, in the order of its java command line:
// $JVM_ARGS, then $FLUSS_ENV_JAVA_OPTS or else env.java.opts.all, then
// $FLUSS_ENV_JAVA_OPTS_CS or else env.java.opts.coordinator-server. For a
// key given twice the JVM keeps the last.
func jvmOptions(c *config.Config, getenv func(string) string) []clientconfig.JVMOption {
	sources := []struct{ env, key string }{
		{"JVM_ARGS", ""},
		{"FLUSS_ENV_JAVA_OPTS", KeyJavaOptsAll},
		{"FLUSS_ENV_JAVA_OPTS_CS", KeyJavaOptsCoordinator},
	}
	var out []clientconfig.JVMOption
	for _, src := range sources {
		opts, where := getenv(src.env), "$"+src.env
		if opts == "" && src.key != "" {
			opts, where = c.String(src.key, ""), src.key
		}
		for _, word := range strings.Fields(opts) {
			kv, ok := strings.CutPrefix(word, "-D")
			if !ok {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			out = append(out, clientconfig.JVMOption{Key: k, Value: v, From: where})
		}
	}
	return out
}

// zooKeeperJAAS finds the JAAS file for ZooKeeper's client: the sidecar's
// own key, or else the last -Djava.security.auth.login.config of the JVM
// options. "==" (which makes Java ignore its other login configurations)
// counts the same as "=".
func zooKeeperJAAS(c *config.Config, jvm []clientconfig.JVMOption) (path, from string) {
	if p := c.String(KeyZKJAASFile, ""); p != "" {
		return p, KeyZKJAASFile
	}
	for _, o := range jvm {
		if o.Key == clientconfig.JAASProperty {
			path, from = strings.TrimPrefix(o.Value, "="), o.From
		}
	}
	return path, from
}

// zooKeeperSecurityFromConfig loads zookeeper.client.config-path and the
// JAAS file and reads the key and trust stores they name.
func zooKeeperSecurityFromConfig(c *config.Config, getenv func(string) string) (ZooKeeperSecurity, error) {
	jvm := jvmOptions(c, getenv)
	jaas, from := zooKeeperJAAS(c, jvm)
	path := c.String(KeyZKClientConfig, "")
	client, err := clientconfig.Load(path, clientconfig.Options{
		JAASPath:   jaas,
		JAASFrom:   from,
		Expand:     config.Providers{}.Expand,
		JVMOptions: jvm,
	})
	if err != nil && path != "" {
		return ZooKeeperSecurity{}, wrapKey(KeyZKClientConfig, err)
	}
	if err != nil {
		return ZooKeeperSecurity{}, err
	}
	sec := ZooKeeperSecurity{Client: client, JAASFrom: from}
	if sec.TLS, sec.SASL, err = client.Security(); err != nil {
		return ZooKeeperSecurity{}, wrapKey(KeyZKClientConfig, err)
	}
	return sec, nil
}

// logZooKeeperSecurity writes the start-up line of the ZooKeeper client
// configuration, and one line per accepted property without effect.
func logZooKeeperSecurity(log hclog.Logger, sec ZooKeeperSecurity) {
	args := []any{"summary", sec.Client.Summary()}
	if sec.Client.Path != "" {
		args = append(args, "config_path", sec.Client.Path)
	}
	if sec.JAASFrom != "" {
		args = append(args, "jaas_from", sec.JAASFrom)
	}
	log.Info("ZooKeeper client security", args...)
	for _, p := range sec.Client.NoEffect {
		log.Info("ZooKeeper client property accepted without effect", "property", p)
	}
}

// ZooKeeperConfig is the zk.Config for these settings, used by the server
// and by the admin commands alike.
func (s Settings) ZooKeeperConfig(log hclog.Logger) zk.Config {
	return zk.Config{
		Address:           s.ZooKeeperAddress,
		Root:              s.ZooKeeperRoot,
		SessionTimeout:    s.ZooKeeperSessionTimeout,
		ConnectionTimeout: s.ZooKeeperConnectionTimeout,
		MaxBufferSize:     int(s.ZooKeeperMaxBufferSize),
		ServerMaxBuffer:   int(s.ZooKeeperServerMaxBuffer),
		Logger:            log,
		TLS:               s.ZooKeeper.TLS,
		SASL:              s.ZooKeeper.SASL,
	}
}

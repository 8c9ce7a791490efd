package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/fluss-sidecar/fluss-sidecar/remote/hdfsblob"
)

// HDFSOptions configure hdfs://, from the Hadoop configuration Fluss's HDFS
// file system reads: its fluss.hadoop.* keys with the prefix removed, over
// the core-site.xml and hdfs-site.xml of HADOOP_CONF_DIR or HADOOP_HOME.
type HDFSOptions struct {
	// Conf holds Hadoop configuration keys and values. Read here:
	// dfs.nameservices, dfs.ha.namenodes.<ns>,
	// dfs.namenode.rpc-address.<ns>[.<nn>], dfs.client.use.datanode.hostname,
	// dfs.data.transfer.protection, dfs.encrypt.data.transfer,
	// dfs.client.socket-timeout, ipc.client.connect.timeout and
	// hadoop.security.authentication (kerberos is refused).
	Conf map[string]string
	// User is the HDFS user; empty: $HADOOP_USER_NAME, else the
	// process's user, as Hadoop's simple authentication takes it.
	User string
}

// DefaultNameNodePort is the port of an hdfs:// authority that names a
// host without one, as Hadoop's client assumes.
const DefaultNameNodePort = 8020

// ErrKerberos refuses a Hadoop configuration that asks for Kerberos.
var ErrKerberos = errors.New("hadoop.security.authentication: kerberos is not supported by the sidecar's HDFS client (only simple authentication)")

// hdfsNameNodes returns the NameNode RPC addresses an hdfs:// authority
// names: a nameservice of dfs.nameservices (or any name with
// dfs.ha.namenodes.<name> or dfs.namenode.rpc-address.<name> set) gives
// its NameNodes' addresses; host:port is that address; a host without a
// port gets DefaultNameNodePort.
func hdfsNameNodes(authority string, conf map[string]string) ([]string, error) {
	if authority == "" {
		return nil, errors.New("hdfs:// needs a NameNode address or a nameservice as its authority (hdfs://host:port/path or hdfs://nameservice/path)")
	}
	if strings.Contains(authority, "@") {
		return nil, fmt.Errorf("hdfs authority %q: user information is not supported", authority)
	}
	if nns := splitConfList(conf["dfs.ha.namenodes."+authority]); len(nns) > 0 {
		var addrs []string
		for _, nn := range nns {
			a := conf["dfs.namenode.rpc-address."+authority+"."+nn]
			if a == "" {
				return nil, fmt.Errorf("nameservice %q: dfs.namenode.rpc-address.%s.%s is not set", authority, authority, nn)
			}
			addrs = append(addrs, a)
		}
		return addrs, nil
	}
	if a := conf["dfs.namenode.rpc-address."+authority]; a != "" {
		return []string{a}, nil
	}
	if slices.Contains(splitConfList(conf["dfs.nameservices"]), authority) {
		return nil, fmt.Errorf("nameservice %q: neither dfs.ha.namenodes.%s nor dfs.namenode.rpc-address.%s is set", authority, authority, authority)
	}
	if host, port, err := net.SplitHostPort(authority); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || host == "" {
			return nil, fmt.Errorf("hdfs authority %q: want host:port or a nameservice", authority)
		}
		return []string{authority}, nil
	}
	if strings.ContainsAny(authority, ":[]") {
		return nil, fmt.Errorf("hdfs authority %q: want host:port or a nameservice", authority)
	}
	return []string{net.JoinHostPort(authority, strconv.Itoa(DefaultNameNodePort))}, nil
}

// splitConfList splits a Hadoop list value on commas, trimming spaces.
func splitConfList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// hdfsUser is the user the client acts as.
func hdfsUser(o HDFSOptions) (string, error) {
	if o.User != "" {
		return o.User, nil
	}
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("no HDFS user: HADOOP_USER_NAME is not set and the process's user is unknown: %w", err)
	}
	return u.Username, nil
}

// confMillis reads a Hadoop duration in milliseconds; 0 if unset or bad.
func confMillis(conf map[string]string, key string) time.Duration {
	ms, err := strconv.ParseInt(strings.TrimSpace(conf[key]), 10, 64)
	if err != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// openHDFS opens the bucket of an hdfs:// remote.data.dir rooted at its
// path.
func openHDFS(dir FsPath, remoteDataDir string, o HDFSOptions) (*blob.Bucket, *hdfsblob.FS, error) {
	if strings.EqualFold(strings.TrimSpace(o.Conf["hadoop.security.authentication"]), "kerberos") {
		return nil, nil, fmt.Errorf("remote: remote.data.dir %q: %w", remoteDataDir, ErrKerberos)
	}
	addrs, err := hdfsNameNodes(dir.Authority, o.Conf)
	if err != nil {
		return nil, nil, fmt.Errorf("remote: remote.data.dir %q: %w", remoteDataDir, err)
	}
	u, err := hdfsUser(o)
	if err != nil {
		return nil, nil, fmt.Errorf("remote: remote.data.dir %q: %w", remoteDataDir, err)
	}
	protection := ""
	for _, p := range []string{"authentication", "integrity", "privacy"} {
		if slices.Contains(splitConfList(strings.ToLower(o.Conf["dfs.data.transfer.protection"])), p) {
			protection = p
		}
	}
	if strings.EqualFold(o.Conf["dfs.encrypt.data.transfer"], "true") {
		protection = "privacy"
	}
	root := dir.Path
	if root == "" {
		root = "/"
	}
	b, fs, err := hdfsblob.Open(root, hdfsblob.Options{
		Addresses:              addrs,
		User:                   u,
		UseDatanodeHostname:    strings.EqualFold(o.Conf["dfs.client.use.datanode.hostname"], "true"),
		DataTransferProtection: protection,
		ConnectTimeout:         confMillis(o.Conf, "ipc.client.connect.timeout"),
		IOTimeout:              confMillis(o.Conf, "dfs.client.socket-timeout"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("remote: remote.data.dir %q: %w", remoteDataDir, err)
	}
	return b, fs, nil
}

// Package zktest starts a real Apache ZooKeeper server as a child Java
// process, for integration tests and for running the sidecar locally.
//
// It never mocks ZooKeeper: tests talk to the same server a Fluss cluster
// would use. The server is found from the Debian "zookeeper" package
// (/usr/share/java/zookeeper.jar, whose manifest lists its dependencies) or
// from $ZOOKEEPER_CLASSPATH / $ZOOKEEPER_HOME, and run with "java" from
// $JAVA_HOME or $PATH. If it is missing, Start fails with ErrNotInstalled,
// whose message says to run "apt-get install -y zookeeper".
//
// A test package usually starts one server for all its tests from TestMain
// with Main, and gives each test its own root path with UniqueRoot:
//
//	var zkAddr string
//
//	func TestMain(m *testing.M) {
//		zktest.Main(m, func(addr string) { zkAddr = addr })
//	}
//
// A test that stops or restarts the server starts its own with StartT.
//
// Under go test -short (make check) nothing here starts a server: Main runs
// the tests without one, and StartT, RawConn and NewCutter (on the address
// Main left empty) skip the test. A test that starts a server or a JVM
// another way calls SkipIfShort first. Without -short nothing skips.
//
// Secured servers: SASLServerConfig describes a server with SASL
// DIGEST-MD5 users (optional, or required through enforce.auth or
// sessionRequireClientSASLAuth); start it with StartConfig. Its readiness
// check is SrvrProbe, the "srvr" four letter word, which needs no session.
// ServerConfig.Secure and NoPlainPort give a server a TLS port (only); the
// internal/tlstest kit starts such servers from its certificates.
//
// The child runs in its own process group, is killed with that group by
// Stop, and on Linux also receives SIGKILL when the test binary dies
// (Pdeathsig), so no server outlives the tests.
package zktest

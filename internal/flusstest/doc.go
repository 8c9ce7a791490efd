// Package flusstest starts real Apache Fluss servers, a CoordinatorServer
// and TabletServers of a released version, as child JVM processes for
// integration tests and benchmarks.
//
// Nothing is built from Fluss's source: a release's server jars come from
// Maven Central through a dependency-only build file in maven/<name>/pom.xml,
// which scripts/resolve-maven.sh (run by make test-deps) copies into
// .deps/maven/<name>/lib once; later runs need no network. A release that is
// not resolved makes Start fail with ErrNotResolved, whose message names the
// script.
//
// A cluster runs against a ZooKeeper the caller started (internal/zktest)
// under a root of its own, with a local remote directory, on free loopback
// ports. Every server has the internal listener FLUSS and any client
// listeners the caller names, SASL/PLAIN on those it asks for:
//
//	c := flusstest.StartT(t, flusstest.Config{
//		Release:   flusstest.Fluss091,
//		ZooKeeper: zkAddr,
//		Root:      zktest.UniqueRoot(t),
//	})
//	addr := c.Coordinator.Endpoint(flusstest.InternalListener)
//
// Start returns once the coordinator's GET_METADATA names every tablet
// server. Each server is a process group of its own, stopped by pid (and
// killed with the test binary on Linux); its stdout and stderr, where the
// log goes, are kept in the cluster's folder, which StartT keeps and names
// when the test failed.
package flusstest

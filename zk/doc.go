// Package zk is the sidecar's ZooKeeper store: a context-aware client over
// github.com/go-zookeeper/zk and the producer snapshot znodes, stored
// byte-identically to a Fluss (Java) coordinator.
//
// Paths. Every method takes a logical path such as "/producers/job-1"; the
// client prepends the configured root (zookeeper.path.root, normalized by
// NormalizeRoot, default "/fluss"), so the znode is "/fluss/producers/job-1".
// A root of "/" adds nothing. Like Fluss (through Curator), znodes get the
// open ACL world:anyone:cdrwa, and Create makes missing parents, the root
// node included, as empty PERSISTENT znodes.
//
// Deadlines. go-zookeeper calls block; every method here runs the call on
// its own goroutine and returns when ctx ends, with ErrUnavailable wrapping
// ctx.Err(). The abandoned request may still complete on the server.
//
// Errors. Failures are *OpError values classified by the sentinels
// ErrNoNode, ErrNodeExists, ErrBadVersion and ErrUnavailable, for use with
// errors.Is.
//
// Sessions. The client survives connection loss and session expiry on its
// own; after an expiry, callbacks registered with OnNewSession run so that
// watch users reload and re-arm their watches.
//
// Producer snapshots. ProducerStore implements the znode side of Fluss's
// producer offsets registry (/producers/<id>, JSON written by
// EncodeSnapshot), fixing two weaknesses of the Java code: an interrupted
// create is settled by reading the znode back instead of being reported as
// "already exists" (W7), and the conditional delete checks the creation
// zxid, since the data version of a producer znode is always 0 (W3).
package zk

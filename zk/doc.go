// Package zk is the sidecar's ZooKeeper client: a context-aware client over
// github.com/go-zookeeper/zk, used by the producer snapshot store
// (storage/zkstore), the snapshot cache's watch, cleanup leadership, ACL
// and table lookups, and proxy discovery.
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
// go-zookeeper's internals. SyncGet and AddPersistentRecursiveWatch need
// two things its public API lacks (queueing a request without waiting for
// the reply, and an opcode it does not know); they reach its unexported
// request methods, from gozk_internals.go only. That file lists every fact
// of go-zookeeper relied on; gozk_pin_test.go checks them in the module's
// source, so an upgrade that changes one fails a test.
//
// Errors. Failures are *OpError values with one storeerr class each; the
// sentinels ErrNoNode, ErrNodeExists and ErrBadVersion are named values of
// the classes storeerr.ErrNotFound, ErrExists and ErrConflict, and
// ErrUnavailable matches both transient classes (storeerr.ErrUnavailable
// and ErrTimeout), for use with errors.Is.
//
// Sessions. The client survives connection loss and session expiry on its
// own; after an expiry, callbacks registered with OnNewSession run so that
// watch users reload and re-arm their watches.
//
// Security. Config.TLS makes every connection TLS (ZooKeeper's
// secureClientPort) and Config.SASL authenticates every new connection,
// for instance with DIGEST-MD5 from package zk/digestmd5, as ZooKeeper's
// Java client does from a JAAS "Client" section. go-zookeeper knows
// neither, so the client dials for it: the TLS handshake happens in the
// dial, and the SASL exchange (requests of opcode sasl) runs between the
// server's ConnectResponse and go-zookeeper reading it. go-zookeeper thus
// never sees a session that is not authenticated, and nothing else is sent
// before; a reconnection authenticates again. When a server definitively
// refuses the client (credentials rejected; server certificate untrusted or
// for another host; client certificate missing or rejected), Connect fails
// at once with an *AuthError naming the cause, even if other servers of
// the list might accept; after Connect such refusals are logged as errors
// and the client keeps retrying. Without TLS and SASL connections are
// go-zookeeper's own.
package zk

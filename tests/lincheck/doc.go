// Package lincheck checks that the producer-offsets registry is
// linearizable as a whole: histories of concurrent REGISTER, GET and DELETE
// calls, made by clients of several sidecars (and by a writer that follows a
// Fluss coordinator's own algorithm) on shared producer ids, are checked
// with porcupine against the registry's sequential model.
//
// The model (model.go) is one register per producer id: absent, or exactly
// one snapshot, named by the unique log end offset its REGISTER carried.
// REGISTER answers CREATED when absent (the state becomes that snapshot)
// and ALREADY_EXISTS when present; GET returns the state; DELETE makes it
// absent. A call whose outcome is unknown (an error answer, a lost
// connection, a client timeout) is recorded as returning at the end of the
// history with an unknown output, so the checker may apply it at any point
// after its call, or never.
//
// The tests (lincheck_test.go) start whole sidecars as child processes of
// the test binary, so that one can be killed with SIGKILL, on one ZooKeeper
// root and one remote.data.dir, and run each fault scenario for a few
// seconds. LINCHECK_LONG=1 (make lincheck) runs every scenario longer and
// with more faults; LINCHECK_KV="key=value;..." adds sidecar settings to
// every sidecar (for example sidecar.snapshot-cache.max-bytes=0);
// LINCHECK_LOGS=dir keeps the sidecars' logs there (set
// sidecar.log.level=debug through LINCHECK_KV to see their sessions and
// watches). After a scenario on a ZooKeeper ensemble, each member is read
// on its own after a sync: members that disagree are reported as a
// ZooKeeper divergence, which no client could have hidden.
//
// The package holds no production code: nothing outside its tests imports
// it.
package lincheck

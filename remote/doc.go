// Package remote is to remote storage what package zk is to ZooKeeper: it
// reaches the storage behind Fluss's remote.data.dir, in every scheme Fluss
// accepts, and knows nothing of what is stored there.
//
//   - FsPath re-implements the parsing, normalisation and string form of
//     Fluss's FsPath, because the znode stores FsPath strings and Fluss's
//     orphan cleanup compares them with listings by string equality;
//   - Resolve checks a remote.data.dir and Open opens the gocloud.dev/blob
//     bucket that serves it: the local file system, S3 and the
//     S3-compatible stores, GCS, Azure, HDFS (package hdfsblob) or memory,
//     with the endpoints and credentials of Options;
//   - CheckAtStart runs a store's probe at start and tells storage that can
//     never work from storage that is only down.
//
// The offsets-file store over it is package storage/remotestore.
package remote

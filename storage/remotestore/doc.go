// Package remotestore stores the producer offsets files of a Fluss cluster
// in its remote storage (Fluss's remote.data.dir), byte-identically to a
// Fluss (Java) coordinator: one compact JSON file per (producer, table) at
// {dir}/producers/{producerId}/{tableId}/{uuid}.offsets.
//
// Store reads, writes, lists and deletes offsets files in a bucket package
// remote opens (the local file system, S3 and the S3-compatible stores,
// GCS, Azure, HDFS or memory); the file's bytes are package flussjson's.
//
// Paths returned by the store are always fully qualified: a local directory
// configured as a bare "/dir" still gives "file:/dir/..." (weakness W1 of the
// Java implementation). The store refuses to read or delete anything outside
// {dir}/producers (W10) and never writes a file Fluss would misread.
package remotestore

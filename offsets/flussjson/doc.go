// Package flussjson holds Fluss's byte formats for producer offsets, stated
// once for every store that reads or writes them: the producer snapshot
// znode (EncodeSnapshot, DecodeSnapshot) and the offsets file
// (EncodeTableOffsets, DecodeTableOffsets), byte-identical to what a Fluss
// coordinator writes, each with a fast path for the canonical form and a
// general decoder for everything a coordinator could have written.
package flussjson

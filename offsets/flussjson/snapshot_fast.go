package flussjson

import (
	"bytes"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeCanonicalSnapshot decodes, without the generic JSON machinery, a
// znode written exactly as EncodeSnapshot and a Fluss coordinator write it:
// compact, keys in order, integers without fraction or exponent, paths
// without escapes. ok is false for anything else, which DecodeSnapshot then
// decodes the general way; when ok is true the result is the one the
// general way gives (FuzzDecodeSnapshotCanonical checks it).
func decodeCanonicalSnapshot(data []byte) (s offsets.Snapshot, ok bool) {
	p := scanner{B: data}
	if !p.Lit(`{"version":1,"expiration_time":`) {
		return s, false
	}
	if s.ExpirationTime, ok = p.Int(); !ok || !p.Lit(`,"tables":[`) {
		return s, false
	}
	n := bytes.Count(data, []byte(`{"table_id":`))
	s.Tables = make([]offsets.FileRef, 0, n)
	if p.Lit("]}") {
		return s, p.End()
	}
	for {
		var ref offsets.FileRef
		if !p.Lit(`{"table_id":`) {
			return s, false
		}
		if ref.TableID, ok = p.Int(); !ok || !p.Lit(`,"offsets_path":`) {
			return s, false
		}
		if ref.OffsetsPath, ok = p.Str(); !ok || !p.Lit("}") {
			return s, false
		}
		s.Tables = append(s.Tables, ref)
		if p.Lit(",") {
			continue
		}
		if p.Lit("]}") {
			return s, p.End()
		}
		return s, false
	}
}

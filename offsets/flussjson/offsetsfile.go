package flussjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// OffsetsFileVersion is the only offsets file version Fluss writes and reads.
const OffsetsFileVersion = 1

// MaxBucketID is the highest bucket id EncodeTableOffsets accepts. The file
// stores a non-partitioned table's offsets as an array indexed by bucket id,
// so one huge id would write an array of that many -1 entries (W9). Fluss
// tables have far fewer buckets than this. It is a rule of the sidecar's
// writing only: a coordinator writes such files, and DecodeTableOffsets
// reads them.
const MaxBucketID = 131071

// unknownOffset is the offsets file's entry for a bucket id without an
// offset: a hole below the highest bucket id. Reading drops every such
// entry, so an offset of -1 cannot be stored.
const unknownOffset = -1

// maxFileBuckets is the most entries a bucket array may have: bucket ids
// are 32-bit (an int in Fluss, int32 on the wire), so the last entry's id
// is at most math.MaxInt32. A coordinator cannot write or read a longer
// array: it builds and reads a file as one byte array, at most 2 GiB.
const maxFileBuckets int64 = math.MaxInt32 + 1

// ErrInvalidOffsets marks a TableOffsets that EncodeTableOffsets refuses
// because Fluss would store it wrongly or refuse it.
var ErrInvalidOffsets = errors.New("invalid table offsets")

// ErrMalformedOffsetsFile marks offsets file content that cannot be decoded.
var ErrMalformedOffsetsFile = errors.New("malformed offsets file")

// EncodeTableOffsets returns the offsets file content for t, byte for byte
// what Fluss's TableBucketOffsetsJsonSerde writes: compact JSON without a
// trailing newline, keys "version", "table_id", then "bucket_offsets" (an
// array indexed by bucket id, holes filled with -1) for a non-partitioned
// table or "partition_offsets" (ascending partition_id) for a partitioned
// one, and neither when t has no buckets.
//
// It refuses, with an error wrapping ErrInvalidOffsets, what Fluss would
// reject or read back differently: partitioned and non-partitioned buckets
// mixed, a negative bucket id, the same bucket twice and an offset of -1
// (the file's "no offset"). It also keeps the sidecar's own writing rules,
// narrower than what a coordinator writes and DecodeTableOffsets reads: no
// offset below 0 and no bucket id above MaxBucketID.
//
// A table given ByBucket is encoded straight from that array, with no
// copy: entries must be -1 or above, the array at most MaxBucketID+1 long,
// and trailing -1 entries are left out as Fluss leaves them out.
func EncodeTableOffsets(t offsets.TableOffsets) ([]byte, error) {
	if t.ByBucket != nil {
		return encodeByBucket(t)
	}
	for _, b := range t.Buckets {
		if b.BucketID > MaxBucketID {
			return nil, fmt.Errorf("%w: table %d: bucket id %d is above the limit %d", ErrInvalidOffsets, t.TableID, b.BucketID, MaxBucketID)
		}
		if b.LogEndOffset < 0 {
			return nil, fmt.Errorf("%w: table %d bucket %s: offset %d is negative; the offsets file stores -1 for a missing bucket, so it would be read back as missing or wrong",
				ErrInvalidOffsets, t.TableID, bucketName(b), b.LogEndOffset)
		}
	}
	return encodeFile(t)
}

// encodeFile writes t's buckets (t.Buckets, in any order) as a Fluss
// coordinator writes them, whatever their offsets and bucket ids, refusing
// only what the file cannot hold: a negative bucket id, the same bucket
// twice, partitioned and non-partitioned buckets mixed, and an offset of -1,
// which reads back as no bucket. It accepts every table DecodeTableOffsets
// returns and writes the bytes that read back as it; EncodeTableOffsets
// adds the sidecar's own rules.
func encodeFile(t offsets.TableOffsets) ([]byte, error) {
	var plain []offsets.BucketOffset
	parts := map[int64][]offsets.BucketOffset{}
	allPlain := true
	for _, b := range t.Buckets {
		allPlain = allPlain && !b.Partitioned
	}
	for _, b := range t.Buckets {
		if b.BucketID < 0 {
			return nil, fmt.Errorf("%w: table %d: negative bucket id %d", ErrInvalidOffsets, t.TableID, b.BucketID)
		}
		if b.LogEndOffset == unknownOffset {
			return nil, fmt.Errorf("%w: table %d bucket %s: offset -1 is the file's mark of a missing bucket, so it would be read back as missing",
				ErrInvalidOffsets, t.TableID, bucketName(b))
		}
		switch {
		case b.Partitioned:
			parts[b.PartitionID] = append(parts[b.PartitionID], b)
		case !allPlain:
			plain = append(plain, b)
		}
	}
	if allPlain {
		plain = t.Buckets // no copy of a large table
	}
	if len(plain) > 0 && len(parts) > 0 {
		return nil, fmt.Errorf("%w: table %d mixes partitioned and non-partitioned buckets", ErrInvalidOffsets, t.TableID)
	}
	var buf bytes.Buffer
	buf.WriteString(fileHead)
	buf.WriteString(strconv.FormatInt(t.TableID, 10))
	switch {
	case len(plain) > 0:
		buf.WriteString(`,"bucket_offsets":`)
		if err := writeBucketArray(&buf, t.TableID, plain); err != nil {
			return nil, err
		}
	case len(parts) > 0:
		ids := make([]int64, 0, len(parts))
		for id := range parts {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		buf.WriteString(`,"partition_offsets":[`)
		for i, id := range ids {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`{"partition_id":`)
			buf.WriteString(strconv.FormatInt(id, 10))
			buf.WriteString(`,"bucket_offsets":`)
			if err := writeBucketArray(&buf, t.TableID, parts[id]); err != nil {
				return nil, err
			}
			buf.WriteByte('}')
		}
		buf.WriteByte(']')
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// encodeByBucket is EncodeTableOffsets for a table given ByBucket.
func encodeByBucket(t offsets.TableOffsets) ([]byte, error) {
	f, err := checkByBucket(t)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, f.size)
	f.each(func(chunk []byte) { buf = append(buf, chunk...) })
	return buf, nil
}

// OffsetsFile is one offsets file's content, checked and ready to write.
type OffsetsFile struct {
	data  []byte       // the content, when it is built in memory
	byBkt byBucketFile // otherwise, the array it is written from
	table int64        // for errors
	built bool         // data holds the content
}

// PrepareTableOffsets checks t as EncodeTableOffsets does. A table given
// ByBucket is then written straight from its array by WriteTo, through a
// small buffer, so that the file's bytes are never all in memory at once;
// any other is encoded at once.
func PrepareTableOffsets(t offsets.TableOffsets) (OffsetsFile, error) {
	if t.ByBucket == nil {
		data, err := EncodeTableOffsets(t)
		return OffsetsFile{data: data, table: t.TableID, built: true}, err
	}
	f, err := checkByBucket(t)
	return OffsetsFile{byBkt: f, table: t.TableID}, err
}

// Len is the size of the file in bytes.
func (f OffsetsFile) Len() int {
	if f.built {
		return len(f.data)
	}
	return f.byBkt.size
}

// WriteTo writes the file's bytes, EncodeTableOffsets' bytes, to w. It may
// be called again, say for a retried write, and writes the same bytes.
func (f OffsetsFile) WriteTo(w io.Writer) (int64, error) {
	if f.built {
		n, err := w.Write(f.data)
		return int64(n), err
	}
	var n int64
	var err error
	f.byBkt.each(func(chunk []byte) {
		if err == nil {
			var m int
			m, err = w.Write(chunk)
			n += int64(m)
		}
	})
	return n, err
}

// byBucketFile is a checked table given ByBucket.
type byBucketFile struct {
	tableID int64
	arr     []int64 // without trailing -1 entries
	size    int
}

func checkByBucket(t offsets.TableOffsets) (byBucketFile, error) {
	if len(t.Buckets) > 0 {
		return byBucketFile{}, fmt.Errorf("%w: table %d has both Buckets and ByBucket", ErrInvalidOffsets, t.TableID)
	}
	arr := t.ByBucket
	for id, v := range arr {
		if v < -1 {
			return byBucketFile{}, fmt.Errorf("%w: table %d bucket %d: offset %d is negative; the offsets file stores -1 for a missing bucket, so it would be read back as missing or wrong",
				ErrInvalidOffsets, t.TableID, id, v)
		}
	}
	for len(arr) > 0 && arr[len(arr)-1] < 0 {
		arr = arr[:len(arr)-1]
	}
	if len(arr) > MaxBucketID+1 {
		return byBucketFile{}, fmt.Errorf("%w: table %d: bucket id %d is above the limit %d", ErrInvalidOffsets, t.TableID, len(arr)-1, MaxBucketID)
	}
	n := len(fileHead) + len(strconv.AppendInt(nil, t.TableID, 10)) + 1
	if len(arr) > 0 {
		n += len(`,"bucket_offsets":`) + 1 + len(arr) // brackets and commas
		for _, v := range arr {
			if v < 0 {
				n += 2 // -1
				continue
			}
			n += decimalLen(v)
		}
	}
	return byBucketFile{tableID: t.TableID, arr: arr, size: n}, nil
}

const fileHead = `{"version":1,"table_id":`

// each hands the file's bytes to emit in chunks of about 16 KiB, in a
// buffer that emit must not keep.
func (f byBucketFile) each(emit func([]byte)) {
	const chunk = 16 << 10
	buf := make([]byte, 0, chunk+32)
	buf = append(buf, fileHead...)
	buf = strconv.AppendInt(buf, f.tableID, 10)
	if len(f.arr) > 0 {
		buf = append(buf, `,"bucket_offsets":[`...)
		for i, v := range f.arr {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, v, 10)
			if len(buf) >= chunk {
				emit(buf)
				buf = buf[:0]
			}
		}
		buf = append(buf, ']')
	}
	emit(append(buf, '}'))
}

func bucketName(b offsets.BucketOffset) string {
	if b.Partitioned {
		return fmt.Sprintf("p%d/%d", b.PartitionID, b.BucketID)
	}
	return strconv.Itoa(int(b.BucketID))
}

// writeBucketArray writes the array indexed by bucket id. The ids are
// already checked to be 0 or above.
func writeBucketArray(buf *bytes.Buffer, tableID int64, bs []offsets.BucketOffset) error {
	n := 0 // the array's length: the highest id plus one
	for _, b := range bs {
		n = max(n, int(b.BucketID)+1)
	}
	arr := make([]int64, n)
	set := make([]bool, n)
	for _, b := range bs {
		if set[b.BucketID] {
			return fmt.Errorf("%w: table %d: bucket %s appears twice", ErrInvalidOffsets, tableID, bucketName(b))
		}
		set[b.BucketID] = true
		arr[b.BucketID] = b.LogEndOffset
	}
	// Size the buffer once: a million-bucket register encodes eight of
	// these at a time, and doubling would leave twice their size behind.
	size := 2 + len(arr)
	for i, v := range arr {
		if !set[i] {
			size += 2
			continue
		}
		size += decimalLen(v)
	}
	buf.Grow(size)
	buf.WriteByte('[')
	for i, v := range arr {
		if i > 0 {
			buf.WriteByte(',')
		}
		if !set[i] {
			v = -1
		}
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), v, 10))
	}
	buf.WriteByte(']')
	return nil
}

// DecodeTableOffsets parses offsets file content as Fluss reads it: version
// must be 1 ("Unsupported version: <v>"), "bucket_offsets" and
// "partition_offsets" must not both be present, -1 entries are dropped
// (bucket missing) and unknown keys are ignored. A repeated key or partition
// keeps the last value, as Jackson's tree model does. Every other offset is
// kept as it is, whatever its value, and arrays may be as long as a
// coordinator writes them: it stores what a register gives it, offsets
// below -1 and bucket ids above MaxBucketID included, and its GET answers
// them.
//
// It is stricter than Fluss only where Fluss would coerce what it never
// writes: numbers must be JSON integers in the int64 range (Jackson's
// asLong also takes strings, fractions and booleans), and an array may not
// have more entries than a 32-bit bucket id can count. Errors wrap
// ErrMalformedOffsetsFile. Buckets come back sorted by (partition id,
// bucket id). It never panics.
func DecodeTableOffsets(b []byte) (offsets.TableOffsets, error) {
	if t, ok := decodeCanonicalOffsets(b); ok {
		return t, nil
	}
	var top map[string]json.RawMessage
	if err := strictUnmarshal(b, &top); err != nil {
		return offsets.TableOffsets{}, malformed("%v", err)
	}
	if top == nil {
		return offsets.TableOffsets{}, malformed("not a JSON object")
	}
	rawVersion, ok := top["version"]
	if !ok {
		return offsets.TableOffsets{}, malformed("missing version")
	}
	version, err := decodeInt(rawVersion, "version")
	if err != nil {
		return offsets.TableOffsets{}, err
	}
	if version != OffsetsFileVersion {
		return offsets.TableOffsets{}, malformed("Unsupported version: %d", version)
	}
	rawTable, ok := top["table_id"]
	if !ok {
		return offsets.TableOffsets{}, malformed("missing table_id")
	}
	tableID, err := decodeInt(rawTable, "table_id")
	if err != nil {
		return offsets.TableOffsets{}, err
	}
	t := offsets.TableOffsets{TableID: tableID}
	rawBuckets, hasBuckets := top["bucket_offsets"]
	rawParts, hasParts := top["partition_offsets"]
	if hasBuckets && hasParts {
		return offsets.TableOffsets{}, malformed("Both bucket_offsets and partition_bucket_offsets cannot be present at the same time")
	}
	switch {
	case hasBuckets:
		arr, err := decodeBucketArray(rawBuckets)
		if err != nil {
			return offsets.TableOffsets{}, err
		}
		for id, off := range arr {
			if off != unknownOffset {
				t.Buckets = append(t.Buckets, offsets.BucketOffset{BucketID: int32(id), LogEndOffset: off})
			}
		}
	case hasParts:
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(rawParts, &entries); err != nil || isNull(rawParts) {
			return offsets.TableOffsets{}, malformed("partition_offsets must be an array of objects")
		}
		byPart := map[int64][]int64{}
		for _, e := range entries {
			if e == nil {
				return offsets.TableOffsets{}, malformed("partition_offsets entry must be an object")
			}
			rawID, ok := e["partition_id"]
			if !ok {
				return offsets.TableOffsets{}, malformed("partition_offsets entry without partition_id")
			}
			pid, err := decodeInt(rawID, "partition_id")
			if err != nil {
				return offsets.TableOffsets{}, err
			}
			arr := []int64(nil)
			if rawArr, ok := e["bucket_offsets"]; ok {
				if arr, err = decodeBucketArray(rawArr); err != nil {
					return offsets.TableOffsets{}, err
				}
			}
			// A repeated partition merges into the earlier one, later
			// buckets winning, as a map keyed by bucket would.
			prev := byPart[pid]
			if len(arr) > len(prev) {
				prev = append(prev, slices.Repeat([]int64{unknownOffset}, len(arr)-len(prev))...)
			}
			for i, off := range arr {
				if off != unknownOffset {
					prev[i] = off
				}
			}
			byPart[pid] = prev
		}
		pids := make([]int64, 0, len(byPart))
		for pid := range byPart {
			pids = append(pids, pid)
		}
		slices.Sort(pids)
		for _, pid := range pids {
			for id, off := range byPart[pid] {
				if off != unknownOffset {
					t.Buckets = append(t.Buckets, offsets.BucketOffset{Partitioned: true, PartitionID: pid, BucketID: int32(id), LogEndOffset: off})
				}
			}
		}
	}
	return t, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedOffsetsFile, fmt.Sprintf(format, args...))
}

// strictUnmarshal decodes exactly one JSON value with numbers kept as text.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func decodeInt(raw json.RawMessage, field string) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, malformed("%s must be a 64-bit integer, got %.40q", field, s)
	}
	return v, nil
}

func decodeBucketArray(raw json.RawMessage) ([]int64, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || isNull(raw) {
		return nil, malformed("bucket_offsets must be an array of integers")
	}
	if err := checkBucketCount(int64(len(elems))); err != nil {
		return nil, err
	}
	out := make([]int64, len(elems))
	for i, e := range elems {
		v, err := decodeInt(e, fmt.Sprintf("bucket_offsets[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// checkBucketCount refuses a bucket array of n entries when the last one's
// bucket id would not fit 32 bits.
func checkBucketCount(n int64) error {
	if n > maxFileBuckets {
		return malformed("bucket_offsets has %d entries, more than a 32-bit bucket id counts (%d)", n, maxFileBuckets)
	}
	return nil
}

// decimalLen is the length of strconv.FormatInt(v, 10).
func decimalLen(v int64) int {
	if v < 0 {
		if v == math.MinInt64 {
			return len("-9223372036854775808")
		}
		return 1 + decimalLen(-v)
	}
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

package admin

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Export formats.
const (
	FormatParquet = "parquet"
	FormatArrow   = "arrow" // Arrow IPC file format
	FormatCSV     = "csv"
	FormatJSONL   = "jsonl"
)

// Formats lists the export formats.
var Formats = []string{FormatParquet, FormatArrow, FormatCSV, FormatJSONL}

// Row is one bucket of one snapshot: a row of the export.
type Row struct {
	ProducerID     string `json:"producer_id"`
	TableID        int64  `json:"table_id"`
	PartitionID    *int64 `json:"partition_id"` // nil for a non-partitioned table
	BucketID       int32  `json:"bucket_id"`
	LogEndOffset   int64  `json:"log_end_offset"`
	ExpirationTime int64  `json:"expiration_time"` // epoch milliseconds
	Expired        bool   `json:"expired"`
}

// Columns are the export's column names, in order.
var Columns = []string{"producer_id", "table_id", "partition_id", "bucket_id", "log_end_offset", "expiration_time", "expired"}

// RowSchema is the Arrow schema of the Arrow and Parquet exports.
var RowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "producer_id", Type: arrow.BinaryTypes.String},
	{Name: "table_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "partition_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "bucket_id", Type: arrow.PrimitiveTypes.Int32},
	{Name: "log_end_offset", Type: arrow.PrimitiveTypes.Int64},
	{Name: "expiration_time", Type: arrow.PrimitiveTypes.Int64},
	{Name: "expired", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

// RowWriter writes export rows in one format.
type RowWriter interface {
	Write(Row) error
	// Close writes what is buffered and the format's footer; it does not
	// close the underlying writer.
	Close() error
}

// NewRowWriter returns a writer of format to w.
func NewRowWriter(format string, w io.Writer) (RowWriter, error) {
	switch format {
	case FormatJSONL:
		bw := bufio.NewWriter(w)
		return &jsonlRows{bw: bw, enc: NewJSONLines(bw)}, nil
	case FormatCSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(Columns); err != nil {
			return nil, err
		}
		return &csvRows{w: cw}, nil
	case FormatArrow:
		fw, err := ipc.NewFileWriter(w, ipc.WithSchema(RowSchema))
		if err != nil {
			return nil, err
		}
		return newArrowRows(fw.Write, fw.Close), nil
	case FormatParquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		fw, err := pqarrow.NewFileWriter(RowSchema, w, props, pqarrow.DefaultWriterProps())
		if err != nil {
			return nil, err
		}
		return newArrowRows(fw.Write, fw.Close), nil
	}
	return nil, fmt.Errorf("unknown export format %q (want parquet, arrow, csv or jsonl)", format)
}

type jsonlRows struct {
	bw  *bufio.Writer
	enc *JSONLines
}

func (j *jsonlRows) Write(r Row) error { return j.enc.Write(r) }
func (j *jsonlRows) Close() error      { return j.bw.Flush() }

type csvRows struct {
	w   *csv.Writer
	rec [7]string
}

func (c *csvRows) Write(r Row) error {
	c.rec[0] = r.ProducerID
	c.rec[1] = strconv.FormatInt(r.TableID, 10)
	c.rec[2] = ""
	if r.PartitionID != nil {
		c.rec[2] = strconv.FormatInt(*r.PartitionID, 10)
	}
	c.rec[3] = strconv.FormatInt(int64(r.BucketID), 10)
	c.rec[4] = strconv.FormatInt(r.LogEndOffset, 10)
	c.rec[5] = strconv.FormatInt(r.ExpirationTime, 10)
	c.rec[6] = strconv.FormatBool(r.Expired)
	return c.w.Write(c.rec[:])
}

func (c *csvRows) Close() error {
	c.w.Flush()
	return c.w.Error()
}

// arrowBatchRows is how many rows an Arrow record batch (and a Parquet row
// group) holds: memory stays bounded whatever the number of snapshots.
const arrowBatchRows = 64 << 10

// arrowRows builds record batches and hands each to write.
type arrowRows struct {
	b     *array.RecordBuilder
	n     int
	write func(arrow.RecordBatch) error
	close func() error
}

func newArrowRows(write func(arrow.RecordBatch) error, closeFn func() error) *arrowRows {
	return &arrowRows{b: array.NewRecordBuilder(memory.DefaultAllocator, RowSchema), write: write, close: closeFn}
}

func (a *arrowRows) Write(r Row) error {
	a.b.Field(0).(*array.StringBuilder).Append(r.ProducerID)
	a.b.Field(1).(*array.Int64Builder).Append(r.TableID)
	if r.PartitionID != nil {
		a.b.Field(2).(*array.Int64Builder).Append(*r.PartitionID)
	} else {
		a.b.Field(2).(*array.Int64Builder).AppendNull()
	}
	a.b.Field(3).(*array.Int32Builder).Append(r.BucketID)
	a.b.Field(4).(*array.Int64Builder).Append(r.LogEndOffset)
	a.b.Field(5).(*array.Int64Builder).Append(r.ExpirationTime)
	a.b.Field(6).(*array.BooleanBuilder).Append(r.Expired)
	a.n++
	if a.n >= arrowBatchRows {
		return a.flush()
	}
	return nil
}

func (a *arrowRows) flush() error {
	if a.n == 0 {
		return nil
	}
	rec := a.b.NewRecordBatch()
	defer rec.Release()
	a.n = 0
	return a.write(rec)
}

func (a *arrowRows) Close() error {
	err := a.flush()
	a.b.Release()
	return errors.Join(err, a.close())
}

// ExportReport counts what Export wrote and skipped.
type ExportReport struct {
	Snapshots int `json:"snapshots"`
	Rows      int `json:"rows"`
	// Skipped counts unreadable znodes and offsets files, whose rows are
	// missing from the export.
	Skipped int `json:"skipped"`
}

// Skip describes a znode or file Export could not read.
type Skip struct {
	ProducerID string `json:"producer_id"`
	Path       string `json:"path,omitempty"`
	Error      string `json:"error"`
}

// Export writes one row per bucket of every snapshot to rw, producers in id
// order, tables in znode order, buckets in file order. What cannot be read
// is passed to onSkip and left out.
func (a *Admin) Export(ctx context.Context, rw RowWriter, onSkip func(Skip) error) (ExportReport, error) {
	var rep ExportReport
	err := a.each(ctx, true, func(s *Snapshot) error {
		rep.Snapshots++
		if s.Err != nil {
			rep.Skipped++
			return onSkip(Skip{ProducerID: s.ProducerID, Error: s.Err.Error()})
		}
		for _, t := range s.Tables {
			if t.Err != nil {
				rep.Skipped++
				if err := onSkip(Skip{ProducerID: s.ProducerID, Path: t.OffsetsPath, Error: t.Err.Error()}); err != nil {
					return err
				}
				continue
			}
			for _, b := range t.Offsets.Buckets {
				r := Row{ProducerID: s.ProducerID, TableID: t.TableID, BucketID: b.BucketID,
					LogEndOffset: b.LogEndOffset, ExpirationTime: s.ExpirationTime, Expired: s.Expired}
				if b.Partitioned {
					p := b.PartitionID
					r.PartitionID = &p
				}
				if err := rw.Write(r); err != nil {
					return fmt.Errorf("write row: %w", err)
				}
				rep.Rows++
			}
		}
		return nil
	})
	return rep, err
}

// ExportFile exports in format to the file at path, atomically: the rows go
// to a temporary file in the same directory, renamed over path only when
// everything was written.
func (a *Admin) ExportFile(ctx context.Context, format, path string, onSkip func(Skip) error) (ExportReport, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return ExportReport{}, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	rw, err := NewRowWriter(format, bw)
	if err != nil {
		return ExportReport{}, err
	}
	rep, err := a.Export(ctx, rw, onSkip)
	if err != nil {
		return rep, err
	}
	if err := rw.Close(); err != nil {
		return rep, err
	}
	if err := bw.Flush(); err != nil {
		return rep, err
	}
	if err := f.Chmod(0o644); err != nil {
		return rep, err
	}
	if err := f.Close(); err != nil {
		return rep, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return rep, err
	}
	ok = true
	return rep, nil
}

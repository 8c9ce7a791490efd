package remotestore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// panickyDriver is a gocloud.dev blob driver over a map that panics in the
// operations named in panicOn: a writer's Close the way gocloud.dev
// v0.47.0's Azure writer did (closing a nil *io.PipeReader), the others
// with a plain value. The methods it does not define panic too (nil
// embedded interface), which no test reaches.
type panickyDriver struct {
	driver.Bucket
	mu      sync.Mutex
	objects map[string][]byte
	panicOn map[string]bool // "write", "read", "delete", "list"
}

func (d *panickyDriver) panics(op string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.panicOn[op]
}

func (d *panickyDriver) ErrorCode(err error) gcerrors.ErrorCode {
	if errors.Is(err, errNoObject) {
		return gcerrors.NotFound
	}
	return gcerrors.Unknown
}
func (d *panickyDriver) As(any) bool             { return false }
func (d *panickyDriver) ErrorAs(error, any) bool { return false }
func (d *panickyDriver) Close() error            { return nil }

var errNoObject = errors.New("no such object")

func (d *panickyDriver) NewTypedWriter(_ context.Context, key, _ string, _ *driver.WriterOptions) (driver.Writer, error) {
	return &panickyWriter{d: d, key: key}, nil
}

func (d *panickyDriver) NewRangeReader(_ context.Context, key string, _, _ int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if d.panics("read") {
		panic("read exploded")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.objects[key]
	if !ok {
		return nil, errNoObject
	}
	return &mapReader{Reader: bytes.NewReader(data), size: int64(len(data))}, nil
}

func (d *panickyDriver) Delete(_ context.Context, key string, _ *driver.DeleteOptions) error {
	if d.panics("delete") {
		panic("delete exploded")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.objects[key]; !ok {
		return errNoObject
	}
	delete(d.objects, key)
	return nil
}

func (d *panickyDriver) ListPaged(context.Context, *driver.ListOptions) (*driver.ListPage, error) {
	if d.panics("list") {
		var m map[string]int
		//lint:ignore SA5000 the runtime panic is the point: the guard must recover from it
		m["list"]++ // assignment to a nil map
	}
	return &driver.ListPage{}, nil
}

type panickyWriter struct {
	d   *panickyDriver
	key string
	buf bytes.Buffer
	pr  *io.PipeReader // never set, as in the v0.47.0 Azure writer's failure
}

func (w *panickyWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *panickyWriter) Close() error {
	if w.d.panics("write") {
		return w.pr.Close() // nil pointer dereference inside io.(*PipeReader).Close
	}
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	w.d.objects[w.key] = bytes.Clone(w.buf.Bytes())
	return nil
}

type mapReader struct {
	*bytes.Reader
	size int64
}

func (r *mapReader) Close() error { return nil }
func (r *mapReader) As(any) bool  { return false }
func (r *mapReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{Size: r.size}
}

type panicCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *panicCounter) DriverPanic(drv, op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[drv+"/"+op]++
}

// TestDriverPanicIsContained: a panic inside the storage driver fails the
// one operation with the class unavailable, is not retried, is counted and
// logged once with driver and operation, and the store serves the next
// calls as usual. It holds whatever gocloud.dev version is in go.mod.
func TestDriverPanicIsContained(t *testing.T) {
	drv := &panickyDriver{objects: map[string][]byte{}, panicOn: map[string]bool{}}
	var logs syncbuf.Buffer
	obs := &panicCounter{n: map[string]int{}}
	sleeps := 0
	opts := countSleeps(&sleeps)
	opts.Bucket = blob.NewBucket(drv)
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	opts.Observer = obs
	ctx := context.Background()
	s, err := Open(ctx, "mem://", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path, err := s.WriteOffsets(ctx, "p", tableA)
	if err != nil {
		t.Fatal(err)
	}
	setPanics := func(ops ...string) {
		drv.mu.Lock()
		defer drv.mu.Unlock()
		clear(drv.panicOn)
		for _, op := range ops {
			drv.panicOn[op] = true
		}
	}
	contained := func(what, op string, err error) {
		t.Helper()
		var dp *DriverPanicError
		if !errors.As(err, &dp) || dp.Op != op || dp.Driver != "injected" {
			t.Fatalf("%s: %v, want a contained panic of injected during %s", what, err, op)
		}
		if !errors.Is(err, storeerr.ErrUnavailable) || !IsRetriable(err) {
			t.Fatalf("%s: class %v, want unavailable", what, storeerr.Classify(err))
		}
	}

	setPanics("write", "delete")
	_, err = s.WriteOffsets(ctx, "p", tableB)
	contained("write", "write", err)
	setPanics("read")
	_, err = s.ReadOffsets(ctx, path)
	contained("read", "read", err)
	setPanics("delete")
	contained("delete", "delete", s.DeleteOffsets(ctx, path))
	setPanics("list")
	_, err = s.ListProducerDirs(ctx)
	contained("list dirs", "list", err)
	_, err = s.ListProducerFiles(ctx, "p")
	contained("list files", "list", err)
	setPanics("write")
	contained("probe", "probe", s.Probe(ctx))

	if sleeps != 0 {
		t.Errorf("a contained panic was retried %d times", sleeps)
	}
	want := map[string]int{"injected/write": 1, "injected/delete": 2, "injected/read": 1, "injected/list": 2, "injected/probe": 1}
	obs.mu.Lock()
	for k, n := range want {
		if obs.n[k] != n {
			t.Errorf("panics counted for %s: %d, want %d (all: %v)", k, obs.n[k], n, obs.n)
		}
	}
	obs.mu.Unlock()
	lines := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "storage driver panicked") {
			lines++
			if !strings.Contains(l, "driver=injected") || !strings.Contains(l, "op=") {
				t.Errorf("panic line without driver and op: %s", l)
			}
		}
		if strings.Contains(l, "retrying") {
			t.Errorf("a contained panic was retried: %s", l)
		}
	}
	if lines != 7 {
		t.Errorf("%d panic lines logged, want one per contained panic (7):\n%s", lines, logs.String())
	}

	// The store goes on serving once the driver behaves.
	setPanics()
	if got, err := s.ReadOffsets(ctx, path); err != nil || !reflect.DeepEqual(got, tableA) {
		t.Fatalf("read after the panics: %+v %v", got, err)
	}
	p2, err := s.WriteOffsets(ctx, "p", tableB)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOffsets(ctx, p2); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	drv.mu.Lock()
	defer drv.mu.Unlock()
	if len(drv.objects) != 1 {
		t.Fatalf("objects left: %v, want only %s", drv.objects, path)
	}
}

// TestAttemptTimeoutBoundsEachTry: with an attempt timeout, a try that
// never returns by itself (a server that accepts and never answers) ends
// as a timeout and is retried; the caller's context alone would have held
// it forever.
func TestAttemptTimeoutBoundsEachTry(t *testing.T) {
	opts := countSleeps(new(int))
	opts.AttemptTimeout = time.Millisecond
	s, err := Open(context.Background(), "mem://", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	calls := 0
	err = s.retry(context.Background(), "op", false, func(ctx context.Context) error {
		calls++
		<-ctx.Done() // stalled until the attempt's deadline
		return ctx.Err()
	})
	if calls != ioAttempts || storeerr.Classify(classified(err)) != storeerr.ErrTimeout {
		t.Fatalf("%d tries, error %v (class %v); want %d tries ending in a timeout", calls, err, storeerr.Classify(classified(err)), ioAttempts)
	}
}

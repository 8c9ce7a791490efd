package hdfsblob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// Options configure Open.
type Options struct {
	// Addresses are the NameNodes' RPC addresses, host:port; with more
	// than one (HA) the client fails over on a standby NameNode or a
	// connection failure.
	Addresses []string
	// User is the HDFS user the client acts as (simple authentication).
	User string
	// UseDatanodeHostname connects to DataNodes by host name rather than
	// IP address (dfs.client.use.datanode.hostname).
	UseDatanodeHostname bool
	// DataTransferProtection is dfs.data.transfer.protection's strongest
	// value ("", authentication, integrity or privacy).
	DataTransferProtection string
	// ConnectTimeout bounds a connection's dial; 0 means 20 s.
	ConnectTimeout time.Duration
	// IOTimeout bounds each read and write on a NameNode or DataNode
	// connection; 0 means 60 s. A connection that times out or fails is
	// closed, so the next call dials again.
	IOTimeout time.Duration
}

// ErrUnavailable marks a failure worth retrying later: a NameNode in safe
// mode or standby, a failed or timed-out connection, no DataNode to write
// to.
var ErrUnavailable = errors.New("hdfs unavailable")

// FS is the driver; Open returns it beside the portable bucket for the
// directory operations the blob API lacks.
type FS struct {
	root string // absolute, cleaned, no trailing slash unless "/"
	opts Options

	mu     sync.Mutex
	client *hdfs.Client
	conns  connSet // the connections of client
	closed bool
}

// Open returns a bucket whose keys are paths under root, an absolute HDFS
// path. The NameNode is dialled on first use, not here, and dialled again
// after a failure to connect, so a cluster that is down at start is used
// once it is back.
func Open(root string, opts Options) (*blob.Bucket, *FS, error) {
	if !strings.HasPrefix(root, "/") {
		return nil, nil, fmt.Errorf("hdfsblob: root %q is not absolute", root)
	}
	if len(opts.Addresses) == 0 {
		return nil, nil, errors.New("hdfsblob: no NameNode address")
	}
	if opts.User == "" {
		return nil, nil, errors.New("hdfsblob: no user")
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 20 * time.Second
	}
	if opts.IOTimeout <= 0 {
		opts.IOTimeout = 60 * time.Second
	}
	fs := &FS{root: path.Clean(root), opts: opts}
	return blob.NewBucket(fs), fs, nil
}

// getClient returns the client, making it if there is none yet.
func (fs *FS) getClient() (*hdfs.Client, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return nil, errors.New("hdfsblob: closed")
	}
	if fs.client != nil {
		return fs.client, nil
	}
	dial := dialer(fs.opts.ConnectTimeout, fs.opts.IOTimeout, &fs.conns)
	c, err := hdfs.NewClient(hdfs.ClientOptions{
		Addresses:              fs.opts.Addresses,
		User:                   fs.opts.User,
		UseDatanodeHostname:    fs.opts.UseDatanodeHostname,
		DataTransferProtection: fs.opts.DataTransferProtection,
		NamenodeDialFunc:       dial,
		DatanodeDialFunc:       dial,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: connect to NameNode %s: %w", ErrUnavailable, strings.Join(fs.opts.Addresses, ","), err)
	}
	fs.client = c
	return c, nil
}

// do runs f with the client on its own goroutine and returns its error, or
// ctx's once ctx ends first (f goes on, bounded by the I/O timeout).
func (fs *FS) do(ctx context.Context, f func(c *hdfs.Client) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		c, err := fs.getClient()
		if err == nil {
			err = f(c)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// abs returns the HDFS path of key.
func (fs *FS) abs(key string) string {
	if key == "" {
		return fs.root
	}
	return path.Join(fs.root, key)
}

// ErrorCode maps an error of this driver to a gcerrors code.
func (fs *FS) ErrorCode(err error) gcerrors.ErrorCode {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return gcerrors.NotFound
	case errors.Is(err, os.ErrPermission):
		return gcerrors.PermissionDenied
	case errors.Is(err, os.ErrExist):
		return gcerrors.AlreadyExists
	case errors.Is(err, syscall.EDQUOT):
		return gcerrors.ResourceExhausted
	case errors.Is(err, context.Canceled):
		return gcerrors.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return gcerrors.DeadlineExceeded
	case errors.Is(err, os.ErrInvalid):
		return gcerrors.InvalidArgument
	}
	return gcerrors.Unknown
}

// As exposes *hdfs.Client.
func (fs *FS) As(i any) bool {
	p, ok := i.(**hdfs.Client)
	if !ok {
		return false
	}
	c, err := fs.getClient()
	if err != nil {
		return false
	}
	*p = c
	return true
}

// ErrorAs supports nothing beyond errors.As on the returned errors.
func (fs *FS) ErrorAs(error, any) bool { return false }

// Attributes stats key.
func (fs *FS) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	var info os.FileInfo
	err := fs.do(ctx, func(c *hdfs.Client) (err error) {
		info, err = c.Stat(fs.abs(key))
		return err
	})
	if err != nil {
		return nil, classify(err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%w: %s is a directory", os.ErrNotExist, fs.abs(key))
	}
	return &driver.Attributes{ContentType: "application/octet-stream", ModTime: info.ModTime(), Size: info.Size()}, nil
}

// ListPaged lists keys under opts.Prefix, sorted: with the "/" delimiter
// one level, directories (empty ones too) as IsDir entries; without, every
// file beneath, recursively. A missing directory lists nothing.
func (fs *FS) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if opts.Delimiter != "" && opts.Delimiter != "/" {
		return nil, fmt.Errorf("%w: delimiter %q (only \"/\")", os.ErrInvalid, opts.Delimiter)
	}
	if opts.BeforeList != nil {
		if err := opts.BeforeList(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	dirKey, _ := splitPrefix(opts.Prefix)
	var objs []*driver.ListObject
	err := fs.do(ctx, func(c *hdfs.Client) error {
		objs = objs[:0]
		return fs.walk(c, dirKey, opts.Delimiter != "", func(o *driver.ListObject) {
			if strings.HasPrefix(o.Key, opts.Prefix) {
				objs = append(objs, o)
			}
		})
	})
	if err != nil {
		return nil, classify(err)
	}
	slices.SortFunc(objs, func(a, b *driver.ListObject) int { return strings.Compare(a.Key, b.Key) })
	start := 0
	if len(opts.PageToken) > 0 {
		after := string(opts.PageToken)
		start, _ = slices.BinarySearchFunc(objs, after, func(o *driver.ListObject, k string) int {
			if o.Key <= k {
				return -1
			}
			return 1
		})
	}
	page := &driver.ListPage{Objects: objs[start:]}
	if opts.PageSize > 0 && len(page.Objects) > opts.PageSize {
		page.Objects = page.Objects[:opts.PageSize]
		page.NextPageToken = []byte(page.Objects[len(page.Objects)-1].Key)
	}
	return page, nil
}

// splitPrefix splits a listing prefix into the key of the directory to
// read ("" for the root) and the start of the names in it.
func splitPrefix(prefix string) (dirKey, name string) {
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return "", prefix
	}
	return prefix[:i], prefix[i+1:]
}

// walk reports the entries under dirKey: one level (directories too) when
// oneLevel, else every file beneath.
func (fs *FS) walk(c *hdfs.Client, dirKey string, oneLevel bool, fn func(*driver.ListObject)) error {
	entries, err := c.ReadDir(fs.abs(dirKey))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		k := e.Name()
		if dirKey != "" {
			k = dirKey + "/" + e.Name()
		}
		switch {
		case e.IsDir() && oneLevel:
			fn(&driver.ListObject{Key: k + "/", IsDir: true})
		case e.IsDir():
			if err := fs.walk(c, k, false, fn); err != nil {
				return err
			}
		default:
			fn(&driver.ListObject{Key: k, ModTime: e.ModTime(), Size: e.Size()})
		}
	}
	return nil
}

// NewRangeReader reads key whole into memory (offsets files are small) and
// serves the range from there.
func (fs *FS) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	var data []byte
	var info os.FileInfo
	err := fs.do(ctx, func(c *hdfs.Client) error {
		f, err := c.Open(fs.abs(key))
		if err != nil {
			return err
		}
		defer f.Close()
		info = f.Stat()
		if info.IsDir() {
			return fmt.Errorf("%w: %s is a directory", os.ErrNotExist, fs.abs(key))
		}
		if offset > 0 {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return err
			}
		}
		var r io.Reader = f
		if length >= 0 {
			r = io.LimitReader(f, length)
		}
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, classify(err)
	}
	if opts != nil && opts.BeforeRead != nil {
		if err := opts.BeforeRead(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	return &reader{r: bytes.NewReader(data), attrs: driver.ReaderAttributes{
		ContentType: "application/octet-stream", ModTime: info.ModTime(), Size: info.Size(),
	}}, nil
}

type reader struct {
	r     *bytes.Reader
	attrs driver.ReaderAttributes
}

func (r *reader) Read(p []byte) (int, error)           { return r.r.Read(p) }
func (r *reader) Close() error                         { return nil }
func (r *reader) Attributes() *driver.ReaderAttributes { return &r.attrs }
func (r *reader) As(any) bool                          { return false }

// NewTypedWriter returns a writer that keeps the bytes and writes them on
// Close, to a temporary file renamed over key.
func (fs *FS) NewTypedWriter(ctx context.Context, key, _ string, opts *driver.WriterOptions) (driver.Writer, error) {
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%w: key %q", os.ErrInvalid, key)
	}
	return &writer{ctx: ctx, fs: fs, key: key}, nil
}

type writer struct {
	ctx context.Context
	fs  *FS
	key string
	buf bytes.Buffer
}

func (w *writer) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *writer) Close() error {
	return classify(w.fs.writeFile(w.ctx, w.key, w.buf.Bytes()))
}

// dirAttempts bounds how many times one write makes its directories again
// after a concurrent prune removed them.
const dirAttempts = 10

// writeFile writes data to a temporary file next to key's path, then
// renames it over that path.
func (fs *FS) writeFile(ctx context.Context, key string, data []byte) error {
	target := fs.abs(key)
	tmp := target + "." + strconv.FormatInt(time.Now().UnixNano(), 16) + ".tmp"
	err := fs.do(ctx, func(c *hdfs.Client) error {
		err := createFile(ctx, c, tmp, data)
		if err == nil {
			// A call given up must not go on to change anything.
			err = ctx.Err()
		}
		if err == nil {
			return c.Rename(tmp, target)
		}
		_ = c.Remove(tmp)
		return err
	})
	if err != nil && ctx.Err() != nil {
		// Given up: remove the temporary file, if the write got that far
		// and the rename did not happen.
		go func() {
			if c, cerr := fs.getClient(); cerr == nil {
				_ = c.Remove(tmp)
			}
		}()
	}
	return err
}

// createFile makes tmp's directories and writes data to it, completing
// the file with HDFS.
func createFile(ctx context.Context, c *hdfs.Client, tmp string, data []byte) error {
	var f *hdfs.FileWriter
	for attempt := 1; ; attempt++ {
		err := c.MkdirAll(path.Dir(tmp), 0o777)
		if err == nil {
			f, err = c.Create(tmp)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) || attempt >= dirAttempts {
			return err
		}
	}
	if d, ok := ctx.Deadline(); ok {
		_ = f.SetDeadline(d)
	}
	if len(data) > 0 {
		// Not for an empty file: the client would allocate a block that no
		// DataNode ever finalizes, and the file would never complete.
		if _, err := f.Write(data); err != nil {
			_ = f.Close()
			return err
		}
	}
	return closeFile(ctx, f)
}

// closeFile completes f, asking again while the NameNode waits for the
// DataNodes to report the last block (as Hadoop's client does).
func closeFile(ctx context.Context, f *hdfs.FileWriter) error {
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := f.Close()
		if err == nil || !hdfs.IsErrReplicating(err) || attempt >= 8 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// Copy is not used by the remote store.
func (fs *FS) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return fmt.Errorf("hdfsblob: %w: Copy", errors.ErrUnsupported)
}

// Delete removes the file key; a missing one is os.ErrNotExist.
func (fs *FS) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return fs.deleteKey(ctx, key)
}

func (fs *FS) deleteKey(ctx context.Context, key string) error {
	p := fs.abs(key)
	err := fs.do(ctx, func(c *hdfs.Client) error {
		info, err := c.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return fmt.Errorf("%w: %s is a directory", os.ErrNotExist, p)
		}
		return c.Remove(p)
	})
	return classify(err)
}

// RemoveEmptyDir removes the directory dirKey if it holds nothing and
// reports whether it is gone (a missing one is).
func (fs *FS) RemoveEmptyDir(ctx context.Context, dirKey string) (bool, error) {
	gone := false
	err := fs.do(ctx, func(c *hdfs.Client) error {
		err := c.Remove(fs.abs(strings.TrimSuffix(dirKey, "/")))
		switch {
		case err == nil, errors.Is(err, os.ErrNotExist):
			gone = true
			return nil
		case errors.Is(err, syscall.ENOTEMPTY):
			return nil
		}
		return err
	})
	return gone, classify(err)
}

// SignedURL is not supported.
func (fs *FS) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", fmt.Errorf("hdfsblob: %w: SignedURL", errors.ErrUnsupported)
}

// Interrupt ends the client's connections and refuses new ones, so that
// every call still running fails at once (one given up by its context
// included); the portable bucket's Close waits for them.
func (fs *FS) Interrupt() {
	fs.conns.closeAll()
}

// Close ends the client's connections, which fails any call still on them
// (one given up by its context included), then closes the client.
func (fs *FS) Close() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.closed = true
	fs.conns.closeAll()
	if fs.client == nil {
		return nil
	}
	err := fs.client.Close()
	fs.client = nil
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

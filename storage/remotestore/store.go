package remotestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/remote/hdfsblob"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// ProducersDirName is the directory under remote.data.dir that holds the
// offsets files: {dir}/producers/{producerId}/{tableId}/{uuid}.offsets.
const ProducersDirName = "producers"

// OffsetsFileSuffix ends every offsets file name.
const OffsetsFileSuffix = ".offsets"

// Retry policy for file I/O, as Fluss's: 3 attempts, sleeping 100 ms then
// 200 ms (doubling, capped at 1 s).
const (
	ioAttempts     = 3
	ioInitialDelay = 100 * time.Millisecond
	ioMaxDelay     = time.Second
)

// Options configures Open.
type Options struct {
	// Remote says how to reach the storage of remote.data.dir's scheme:
	// endpoints and credentials.
	Remote remote.Options

	// Bucket, if set, is used instead of opening one from remoteDataDir;
	// keys are still laid out as remoteDataDir says (for s3://b/p the
	// bucket root is b's root; for a local dir it is the dir itself). The
	// store does not close an injected bucket, and removes no local
	// directories through it.
	Bucket *blob.Bucket
	// Logger is the parent logger; the store logs to its "remote" sub-logger.
	Logger hclog.Logger
	// NewUUID names new offsets files; it defaults to a random (v4),
	// lower-case UUID.
	NewUUID func() string
	// Sleep waits between I/O retries; it defaults to a context-aware timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Observer, if set, counts the driver panics the store contains (see
	// guard.go).
	Observer Observer
	// AttemptTimeout, if positive, bounds each try of a read, write, delete
	// or listing; a try that runs out fails with storeerr.ErrTimeout and is
	// retried like any transient failure. Zero: only the caller's context
	// bounds it.
	AttemptTimeout time.Duration
}

// Store reads and writes producer offsets files under one Fluss
// remote.data.dir. It is safe for concurrent use.
type Store struct {
	dir       remote.FsPath // qualified remote.data.dir
	producers remote.FsPath // dir joined with "producers"
	// producersKey is the bucket key prefix of the producers directory,
	// ending in "/".
	producersKey string
	bucket       *blob.Bucket
	ownsBucket   bool
	// localProducers is the producers directory on the local file system
	// when the store opened a fileblob bucket itself, else "".
	localProducers string
	// dirs removes empty directories where the bucket has real ones
	// (HDFS); nil otherwise.
	dirs dirRemover
	log  hclog.Logger
	// driver names the gocloud.dev driver beneath bucket, for logs and
	// metrics; obs counts what the store contains (nil: nothing).
	driver         string
	obs            Observer
	attemptTimeout time.Duration
	newUUID        func() string
	sleep          func(ctx context.Context, d time.Duration) error
	// dirsMade, if set, is called by a local write once the file's
	// directories exist and before the file is created in them: tests
	// prune them there to make the race with cleanup happen (local.go).
	dirsMade func(dir string)

	closeOnce sync.Once
	closeErr  error
}

// Open opens the store for remoteDataDir, Fluss's remote.data.dir, in any
// form remote.Resolve accepts. A local directory is created if missing;
// its paths are always returned qualified as "file:/abs/dir/..." (see W1).
func Open(ctx context.Context, remoteDataDir string, opts Options) (*Store, error) {
	loc, err := remote.Resolve(remoteDataDir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		dir:            loc.Dir,
		log:            opts.Logger,
		newUUID:        opts.NewUUID,
		sleep:          opts.Sleep,
		bucket:         opts.Bucket,
		obs:            opts.Observer,
		attemptTimeout: opts.AttemptTimeout,
		driver:         loc.Driver,
	}
	if opts.Bucket != nil {
		s.driver = "injected"
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	s.log = s.log.Named("remote")
	if s.newUUID == nil {
		s.newUUID = uuid.NewString
	}
	if s.sleep == nil {
		s.sleep = sleepContext
	}
	if s.bucket == nil {
		var dirs *hdfsblob.FS
		err := s.guard("open", func() (err error) {
			s.bucket, dirs, err = remote.Open(ctx, loc, opts.Remote)
			return err
		})
		if err != nil {
			return nil, err
		}
		s.ownsBucket = true
		if dirs != nil { // a nil *hdfsblob.FS would make s.dirs non-nil
			s.dirs = dirs
		}
		if loc.LocalDir != "" {
			s.localProducers = filepath.Join(loc.LocalDir, ProducersDirName)
		}
	}
	s.producers = s.dir.Join(ProducersDirName)
	s.producersKey = loc.Key(s.producers) + "/"
	if s.localProducers != "" {
		if err := os.MkdirAll(s.localProducers, 0o777); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("remote: create %s: %w", s.localProducers, err)
		}
	}
	s.log.Debug("opened remote store", "dir", s.dir.String(), "producers", s.producers.String())
	return s, nil
}

// Dir returns the qualified remote.data.dir.
func (s *Store) Dir() remote.FsPath { return s.dir }

// ProducersDir returns {dir}/producers.
func (s *Store) ProducersDir() remote.FsPath { return s.producers }

// Close releases the bucket if the store opened it. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		// The portable bucket's Close waits for the calls in flight; a
		// driver that can end them (HDFS) does so first.
		if i, ok := s.dirs.(interface{ Interrupt() }); ok && s.ownsBucket {
			i.Interrupt()
		}
		if s.ownsBucket {
			s.closeErr = s.guard("close", s.bucket.Close)
		}
	})
	return s.closeErr
}

// WriteOffsets writes t to a new file
// {dir}/producers/{producerID}/{tableId}/{uuid}.offsets and returns its fully
// qualified FsPath string, the value for the znode's offsets_path. Offsets
// that cannot be encoded are refused before anything is written.
func (s *Store) WriteOffsets(ctx context.Context, producerID string, t offsets.TableOffsets) (string, error) {
	if err := checkProducerID(producerID); err != nil {
		return "", err
	}
	file, err := flussjson.PrepareTableOffsets(t)
	if err != nil {
		return "", err
	}
	name := s.newUUID() + OffsetsFileSuffix
	if err := checkSegment(name); err != nil {
		return "", err
	}
	rel := producerID + "/" + strconv.FormatInt(t.TableID, 10) + "/" + name
	key := s.producersKey + rel
	path := s.producers.String() + "/" + rel
	err = s.retry(ctx, "write "+path, true, func(ctx context.Context) error {
		if s.localProducers != "" {
			// Streamed to the file: a large table's bytes are never all
			// in memory.
			return s.writeLocal(ctx, rel, file)
		}
		// A cloud bucket takes the bytes whole, for their MD5 and since
		// its writer buffers whole parts anyway.
		data := &bytes.Buffer{}
		data.Grow(file.Len())
		file.WriteTo(data)
		return s.guard("write", func() error {
			return s.bucket.WriteAll(ctx, key, data.Bytes(), &blob.WriterOptions{ContentType: "application/octet-stream"})
		})
	})
	if err != nil {
		// Nothing names the file yet; a failed write must not leave a
		// partial one (a full disk leaves zero-byte files otherwise). When
		// the caller has given up, the removal goes on without it: a
		// storage that hangs must not hold the caller past its context.
		if ctx.Err() != nil {
			go s.removeFailed(ctx, key, path)
		} else {
			s.removeFailed(ctx, key, path)
		}
		return "", classified(fmt.Errorf("remote: write offsets file %s: %w", path, err))
	}
	s.log.Debug("wrote offsets file", "producer_id", producerID, "path", path)
	return path, nil
}

// removeFailed deletes the file of a failed write, bounded by
// probeCleanupTimeout even when ctx has ended.
func (s *Store) removeFailed(ctx context.Context, key, path string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeCleanupTimeout)
	defer cancel()
	derr := s.guard("delete", func() error { return s.bucket.Delete(dctx, key) })
	if derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
		s.log.Warn("could not remove a failed offsets file", "path", path, "error", derr)
	}
}

// PlannedPath returns a path of the length WriteOffsets returns for this
// producer and table (with an all-zero UUID), for size checks before any
// file is written.
func (s *Store) PlannedPath(producerID string, tableID int64) string {
	return s.producers.String() + "/" + producerID + "/" + strconv.FormatInt(tableID, 10) + "/" +
		"00000000-0000-0000-0000-000000000000" + OffsetsFileSuffix
}

// ReadOffsets reads and decodes the offsets file at offsetsPath, which may
// be in any form a coordinator stores for a file of this store (for a local
// store "file:/x/...", "file:///x/..." or a bare "/x/..."). A path outside
// the producers directory is refused (ErrOutsidePath); a missing file gives
// an error matching storage.ErrNotFound.
func (s *Store) ReadOffsets(ctx context.Context, offsetsPath string) (offsets.TableOffsets, error) {
	key, err := s.fileKey(offsetsPath)
	if err != nil {
		return offsets.TableOffsets{}, err
	}
	var data []byte
	err = s.retry(ctx, "read "+offsetsPath, false, func(ctx context.Context) error {
		return s.guard("read", func() error {
			var rerr error
			data, rerr = s.bucket.ReadAll(ctx, key)
			return rerr
		})
	})
	if gcerrors.Code(err) == gcerrors.NotFound {
		return offsets.TableOffsets{}, fmt.Errorf("remote: %w: %s", storage.ErrNotFound, offsetsPath)
	}
	if err != nil {
		return offsets.TableOffsets{}, classified(fmt.Errorf("remote: read offsets file %s: %w", offsetsPath, err))
	}
	t, err := flussjson.DecodeTableOffsets(data)
	if err != nil {
		return offsets.TableOffsets{}, storeerr.New(storeerr.ErrCorrupt, false, fmt.Errorf("remote: offsets file %s: %w", offsetsPath, err))
	}
	return t, nil
}

// Qualify returns the fully qualified form (the one WriteOffsets returns and
// the listings use) of offsetsPath, any form ReadOffsets accepts. Orphan
// cleanup should compare qualified forms: a Java coordinator with a bare
// local remote.data.dir stores "/dir/..." but lists "file:/dir/..." (W1).
// A path outside the store gives ErrOutsidePath.
func (s *Store) Qualify(offsetsPath string) (string, error) {
	key, err := s.fileKey(offsetsPath)
	if err != nil {
		return "", err
	}
	return s.producers.String() + "/" + strings.TrimPrefix(key, s.producersKey), nil
}

// DeleteOffsets deletes the offsets file at offsetsPath (any form
// ReadOffsets accepts). A missing file is not an error; a path outside the
// producers directory is refused.
func (s *Store) DeleteOffsets(ctx context.Context, offsetsPath string) error {
	key, err := s.fileKey(offsetsPath)
	if err != nil {
		return err
	}
	err = s.retry(ctx, "delete "+offsetsPath, false, func(ctx context.Context) error {
		return s.guard("delete", func() error { return s.bucket.Delete(ctx, key) })
	})
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return classified(fmt.Errorf("remote: delete offsets file %s: %w", offsetsPath, err))
	}
	s.log.Debug("deleted offsets file", "path", offsetsPath)
	return nil
}

// ListProducerDirs returns the sorted names of the directories directly
// under the producers directory (none if it does not exist). On a local
// store empty directories are included; an object store has none.
func (s *Store) ListProducerDirs(ctx context.Context) ([]string, error) {
	var names []string
	if s.localProducers != "" {
		if err := ctx.Err(); err != nil {
			return nil, classified(fmt.Errorf("remote: list %s: %w", s.producers, err))
		}
		entries, err := os.ReadDir(s.localProducers)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, classified(fmt.Errorf("remote: list %s: %w", s.producers, err))
		}
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		return names, nil
	}
	err := s.retry(ctx, "list "+s.producers.String(), false, func(ctx context.Context) error {
		names = names[:0]
		return s.eachObject(ctx, &blob.ListOptions{Prefix: s.producersKey, Delimiter: "/"}, func(obj *blob.ListObject) {
			if obj.IsDir {
				names = append(names, strings.TrimSuffix(strings.TrimPrefix(obj.Key, s.producersKey), "/"))
			}
		})
	})
	if err != nil {
		return nil, classified(fmt.Errorf("remote: list %s: %w", s.producers, err))
	}
	slices.Sort(names)
	return names, nil
}

// ListProducerFiles returns the files in the table directories of producer
// producerID, i.e. {dir}/producers/{producerID}/{table}/{file}, sorted by
// path. Entries at other depths are not reported. On a local store a write in
// progress shows as a "<name>.offsets.<hex>.tmp" file.
func (s *Store) ListProducerFiles(ctx context.Context, producerID string) ([]storage.FileInfo, error) {
	if err := checkSegment(producerID); err != nil {
		return nil, err
	}
	prefix := s.producersKey + producerID + "/"
	base := s.producers.String() + "/" + producerID + "/"
	var files []storage.FileInfo
	err := s.retry(ctx, "list "+base, false, func(ctx context.Context) error {
		files = files[:0]
		return s.eachObject(ctx, &blob.ListOptions{Prefix: prefix}, func(obj *blob.ListObject) {
			rel := strings.TrimPrefix(obj.Key, prefix)
			table, name, ok := strings.Cut(rel, "/")
			if obj.IsDir || !ok || table == "" || name == "" || strings.Contains(name, "/") {
				return
			}
			files = append(files, storage.FileInfo{Path: base + rel, TableDir: table, ModTime: obj.ModTime})
		})
	})
	if err != nil {
		return nil, classified(fmt.Errorf("remote: list %s: %w", base, err))
	}
	slices.SortFunc(files, func(a, b storage.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// PruneEmptyDirs removes the empty table directories of producer
// producerID, then the producer directory if it is empty too, and reports
// whether the producer directory is gone. Only a local store and HDFS have
// real directories; on an object store it only reports whether any object
// is left.
func (s *Store) PruneEmptyDirs(ctx context.Context, producerID string) (bool, error) {
	if err := checkSegment(producerID); err != nil {
		return false, err
	}
	if s.dirs != nil {
		return s.pruneDirs(ctx, producerID)
	}
	if s.localProducers == "" {
		files, err := s.ListProducerFiles(ctx, producerID)
		return err == nil && len(files) == 0, err
	}
	pdir := filepath.Join(s.localProducers, producerID)
	if err := ctx.Err(); err != nil {
		return false, classified(fmt.Errorf("remote: prune %s: %w", pdir, err))
	}
	entries, err := os.ReadDir(pdir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, classified(fmt.Errorf("remote: list %s: %w", pdir, err))
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := removeEmptyDir(filepath.Join(pdir, e.Name())); err != nil {
				return false, err
			}
		}
	}
	return removeEmptyDir(pdir)
}

// dirRemover removes a directory of the bucket that holds nothing and
// reports whether it is gone.
type dirRemover interface {
	RemoveEmptyDir(ctx context.Context, dirKey string) (bool, error)
}

// pruneDirs is PruneEmptyDirs through a dirRemover: each empty table
// directory, then the producer directory if it is empty too.
func (s *Store) pruneDirs(ctx context.Context, producerID string) (bool, error) {
	pkey := s.producersKey + producerID + "/"
	var tables []string
	err := s.retry(ctx, "list "+s.producers.String()+"/"+producerID, false, func(ctx context.Context) error {
		tables = tables[:0]
		return s.eachObject(ctx, &blob.ListOptions{Prefix: pkey, Delimiter: "/"}, func(obj *blob.ListObject) {
			if obj.IsDir {
				tables = append(tables, obj.Key)
			}
		})
	})
	if err != nil {
		return false, classified(fmt.Errorf("remote: prune %s/%s: %w", s.producers, producerID, err))
	}
	for _, key := range append(tables, pkey) {
		var gone bool
		err := s.retry(ctx, "remove directory "+key, false, func(ctx context.Context) error {
			return s.guard("delete", func() (err error) {
				gone, err = s.dirs.RemoveEmptyDir(ctx, key)
				return err
			})
		})
		if err != nil {
			return false, classified(fmt.Errorf("remote: remove directory %s: %w", key, err))
		}
		if key == pkey {
			return gone, nil
		}
	}
	return false, nil
}

// removeEmptyDir removes dir if it is empty and reports whether it is gone.
func removeEmptyDir(dir string) (bool, error) {
	err := os.Remove(dir)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return true, nil
	case isNotEmpty(dir):
		return false, nil
	default:
		return false, classified(fmt.Errorf("remote: remove directory %s: %w", dir, err))
	}
}

func isNotEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// fileKey maps an offsets file path to its bucket key. It accepts only a
// file directly inside a table directory of a producer directory of this
// store: {producers}/{producer}/{table}/{file}.
func (s *Store) fileKey(offsetsPath string) (string, error) {
	p, err := remote.ParseFsPath(offsetsPath)
	if err != nil {
		return "", fmt.Errorf("remote: %w: %s: %v", ErrOutsidePath, offsetsPath, err)
	}
	var sameFS bool
	if s.dir.Scheme == "file" {
		sameFS = (p.Scheme == "" || strings.EqualFold(p.Scheme, "file")) && p.Authority == ""
	} else {
		sameFS = strings.EqualFold(p.Scheme, s.dir.Scheme) && p.Authority == s.dir.Authority
	}
	prefix := strings.TrimSuffix(s.producers.Path, "/") + "/"
	rel, under := strings.CutPrefix(p.Path, prefix)
	if !sameFS || !under {
		return "", fmt.Errorf("remote: %w: %s is not under %s", ErrOutsidePath, offsetsPath, s.producers)
	}
	if !storage.CheckFileRel(rel) {
		return "", fmt.Errorf("remote: %w: %s is not a file in a table directory of %s", ErrOutsidePath, offsetsPath, s.producers)
	}
	return s.producersKey + rel, nil
}

// retry runs f up to ioAttempts times while it fails with a retriable error
// (or, for writes, NotFound: a concurrent cleanup may remove a temporary
// file or directory mid-write).
//
// A context that has ended fails it before any try: the drivers do not all
// look at it (fileblob reads and deletes without), and a call given up must
// not go on to change anything. The portable layer refuses such a call
// before it reaches the store; the store keeps the check for its own
// safety, also when run without the layer, and between tries.
func (s *Store) retry(ctx context.Context, op string, retryNotFound bool, f func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	delay := ioInitialDelay
	for attempt := 1; ; attempt++ {
		err := s.attempt(ctx, f)
		if err == nil {
			return nil
		}
		var panicked *DriverPanicError
		retriable := (IsRetriable(err) || (retryNotFound && gcerrors.Code(err) == gcerrors.NotFound)) && !errors.As(err, &panicked)
		if attempt >= ioAttempts || !retriable || ctx.Err() != nil {
			return err
		}
		s.log.Warn("remote storage operation failed, retrying", "op", op, "attempt", attempt, "error", err)
		if serr := s.sleep(ctx, delay); serr != nil {
			return errors.Join(err, serr)
		}
		delay = min(2*delay, ioMaxDelay)
	}
}

// attempt runs one try of f, bounded by the attempt timeout if there is
// one: the object store SDKs set no overall deadline of their own, so a
// server that accepts a request and never answers would otherwise hold it
// (and whatever lock its caller holds) for as long as ctx allows, which for
// cleanup is forever.
func (s *Store) attempt(ctx context.Context, f func(ctx context.Context) error) error {
	if s.attemptTimeout <= 0 {
		return f(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, s.attemptTimeout)
	defer cancel()
	return f(actx)
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// checkProducerID refuses, with storage's rule, a producer id Fluss
// refuses. The portable layer checks it too; the store keeps the check for
// its own safety, also when run without the layer: the id becomes a
// directory of the bucket, and an object store takes any key.
func checkProducerID(id string) error {
	if err := storage.CheckFileProducerID(id); err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

// checkSegment accepts a name usable as one path segment (storage's
// rule), for the same safety.
func checkSegment(name string) error {
	if err := storage.CheckSegment(name); err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// eachObject calls fn for every object of one listing.
func (s *Store) eachObject(ctx context.Context, opts *blob.ListOptions, fn func(*blob.ListObject)) error {
	return s.guard("list", func() error { return s.listEach(ctx, opts, fn) })
}

func (s *Store) listEach(ctx context.Context, opts *blob.ListOptions, fn func(*blob.ListObject)) error {
	it := s.bucket.List(opts)
	for {
		obj, err := it.Next(ctx)
		if isEOF(err) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(obj)
	}
}

package admin

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Kinds of problem fsck reports.
const (
	// KindUnreadableZnode: a producer znode that cannot be read or
	// decoded. Its files are never repaired.
	KindUnreadableZnode = "unreadable_znode"
	// KindDanglingReference: a znode names an offsets file that does not
	// exist, or a path outside the remote producers directory.
	KindDanglingReference = "dangling_reference"
	// KindUnreadableFile: a file a znode names exists but cannot be read
	// or decoded.
	KindUnreadableFile = "unreadable_file"
	// KindMismatch: a file's content disagrees with its path (table
	// directory, producer directory) or with the znode entry naming it.
	KindMismatch = "mismatch"
	// KindOrphanFile: an offsets file no znode names.
	KindOrphanFile = "orphan_file"
	// KindTemporaryFile: a file left by an interrupted write (any name
	// not ending in ".offsets"), named by no znode.
	KindTemporaryFile = "temporary_file"
)

// Finding is one problem fsck found.
type Finding struct {
	Kind       string `json:"kind"`
	ProducerID string `json:"producer_id"`
	TableID    *int64 `json:"table_id,omitempty"`
	Path       string `json:"path,omitempty"`
	// AgeSeconds is a file's age, for orphan and temporary files.
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
	Detail     string `json:"detail"`
}

// Action is what repair did, or decided not to do, about one finding.
type Action struct {
	Action string `json:"action"` // "deleted", "kept" or "failed"
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// FsckOptions configure Fsck.
type FsckOptions struct {
	// Repair deletes orphan and temporary files that are provably
	// unreferenced and older than GracePeriod. Nothing else is changed.
	Repair bool
	// GracePeriod protects young files (a register in flight writes its
	// files before its znode): sidecar.orphan-cleanup.grace-period.
	GracePeriod time.Duration
}

// FsckReport counts what Fsck found and did.
type FsckReport struct {
	Snapshots int            `json:"snapshots"`
	Files     int            `json:"files"`
	Findings  map[string]int `json:"findings"`
	Deleted   int            `json:"deleted"`
	Kept      int            `json:"kept"`
	Failed    int            `json:"failed"`
}

// Clean reports whether nothing is left to fix: no finding, or every
// finding repaired.
func (r FsckReport) Clean() bool {
	n := 0
	for _, c := range r.Findings {
		n += c
	}
	return n == r.Deleted
}

// fileState is what fsck knows about one listed file.
type fileState struct {
	info       storage.FileInfo
	producer   string // the producer directory it is in
	referenced bool   // some readable znode names it
}

// Fsck checks the registry and calls onFinding for each problem, in a
// stable order (znodes by producer id, then files by path), and onAction
// for each repair decision. Files are listed before znodes are read, so a
// snapshot registered meanwhile can at worst make its young files look
// orphaned; they are then kept by the grace period and by the re-check of
// their producer's znode just before any delete.
func (a *Admin) Fsck(ctx context.Context, opts FsckOptions, onFinding func(Finding) error, onAction func(Action) error) (FsckReport, error) {
	rep := FsckReport{Findings: map[string]int{}}
	emit := func(f Finding) error {
		rep.Findings[f.Kind]++
		return onFinding(f)
	}

	// 1. Every file under the producers directory, by qualified path.
	files, dirs, err := a.listAllFiles(ctx)
	if err != nil {
		return rep, err
	}
	rep.Files = len(files)

	// 2. Every znode and the files it names.
	unreadable := map[string]bool{} // producers whose znode cannot be read
	err = a.each(ctx, true, func(s *Snapshot) error {
		rep.Snapshots++
		if s.Err != nil {
			unreadable[s.ProducerID] = true
			return emit(Finding{Kind: KindUnreadableZnode, ProducerID: s.ProducerID, Detail: s.Err.Error()})
		}
		for _, t := range s.Tables {
			if err := a.checkReference(s.ProducerID, t, files, emit); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}

	// 3. Files no znode names.
	now := a.now()
	for _, dir := range dirs {
		for _, q := range dir.paths {
			st := files[q]
			if st.referenced {
				continue
			}
			age := int64(now.Sub(st.info.ModTime) / time.Second)
			kind := KindOrphanFile
			detail := "no snapshot names this file"
			if !strings.HasSuffix(st.info.Path, remotestore.OffsetsFileSuffix) {
				kind = KindTemporaryFile
				detail = "a file left by an interrupted write; no snapshot names it"
			} else if m := a.checkContent(ctx, st); m != "" {
				if err := emit(Finding{Kind: KindMismatch, ProducerID: st.producer, Path: st.info.Path, Detail: m}); err != nil {
					return rep, err
				}
			}
			if err := emit(Finding{Kind: kind, ProducerID: st.producer, Path: st.info.Path, AgeSeconds: &age, Detail: detail}); err != nil {
				return rep, err
			}
			if !opts.Repair {
				continue
			}
			act := a.repairFile(ctx, kind, st, unreadable[st.producer], now.Add(-opts.GracePeriod), opts.GracePeriod)
			switch act.Action {
			case "deleted":
				rep.Deleted++
			case "kept":
				rep.Kept++
			default:
				rep.Failed++
			}
			if err := onAction(act); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// checkReference reports what is wrong with one znode entry and marks its
// file referenced.
func (a *Admin) checkReference(producerID string, t Table, files map[string]*fileState, emit func(Finding) error) error {
	tableID := t.TableID
	f := Finding{ProducerID: producerID, TableID: &tableID, Path: t.OffsetsPath}
	q, qerr := a.files.Qualify(t.OffsetsPath)
	if qerr == nil {
		if st := files[q]; st != nil {
			st.referenced = true
		}
	}
	switch {
	case errors.Is(t.Err, remotestore.ErrOutsidePath) || qerr != nil:
		f.Kind, f.Detail = KindDanglingReference, "the path is not a file in a table directory of the remote producers directory"
		return emit(f)
	case errors.Is(t.Err, storage.ErrNotFound):
		f.Kind, f.Detail = KindDanglingReference, "the offsets file does not exist"
		return emit(f)
	case t.Err != nil:
		f.Kind, f.Detail = KindUnreadableFile, t.Err.Error()
		return emit(f)
	}
	var problems []string
	if t.Offsets.TableID != t.TableID {
		problems = append(problems, fmt.Sprintf("the file holds table %d, the znode entry says table %d", t.Offsets.TableID, t.TableID))
	}
	owner, tableDir := pathParts(q)
	if tableDir != strconv.FormatInt(t.Offsets.TableID, 10) {
		problems = append(problems, fmt.Sprintf("the file holds table %d but is in table directory %q", t.Offsets.TableID, tableDir))
	}
	if owner != producerID {
		problems = append(problems, fmt.Sprintf("the file is in producer directory %q", owner))
	}
	if len(problems) == 0 {
		return nil
	}
	f.Kind, f.Detail = KindMismatch, strings.Join(problems, "; ")
	return emit(f)
}

// checkContent reads an unreferenced offsets file and says how its content
// disagrees with its path, or "" if it agrees (or cannot be read: it is
// reported as an orphan either way).
func (a *Admin) checkContent(ctx context.Context, st *fileState) string {
	t, err := a.files.ReadOffsets(ctx, st.info.Path)
	if errors.Is(err, flussjson.ErrMalformedOffsetsFile) {
		return "the file does not decode: " + err.Error()
	}
	if err != nil {
		return ""
	}
	if strconv.FormatInt(t.TableID, 10) != st.info.TableDir {
		return fmt.Sprintf("the file holds table %d but is in table directory %q", t.TableID, st.info.TableDir)
	}
	return ""
}

// repairFile deletes an unreferenced file when that is provably safe: the
// file is older than the grace period and its producer's znode, read again
// now, is readable and does not name it.
func (a *Admin) repairFile(ctx context.Context, kind string, st *fileState, ownerUnreadable bool, cutoff time.Time, grace time.Duration) Action {
	act := Action{Kind: kind, Path: st.info.Path}
	if ownerUnreadable {
		act.Action, act.Reason = "kept", "the znode of producer "+st.producer+" cannot be read, so the file may be live"
		return act
	}
	if st.info.ModTime.After(cutoff) {
		act.Action, act.Reason = "kept", fmt.Sprintf("younger than the grace period (%s)", grace)
		return act
	}
	// Re-check: a snapshot registered since the scan may name it now.
	data, err := a.snaps.RawSnapshot(ctx, st.producer)
	switch {
	case errors.Is(err, zk.ErrNoNode):
	case err != nil:
		act.Action, act.Reason = "kept", "could not re-read the znode: "+err.Error()
		return act
	default:
		s, derr := flussjson.DecodeSnapshot(data)
		if derr != nil {
			act.Action, act.Reason = "kept", "the znode no longer decodes: "+derr.Error()
			return act
		}
		for _, ref := range s.Tables {
			if q, err := a.files.Qualify(ref.OffsetsPath); err == nil && q == st.info.Path {
				act.Action, act.Reason = "kept", "a snapshot registered since the scan names it"
				return act
			}
		}
	}
	if err := a.files.DeleteOffsets(ctx, st.info.Path); err != nil {
		act.Action, act.Reason = "failed", err.Error()
		return act
	}
	act.Action = "deleted"
	act.Reason = fmt.Sprintf("unreferenced and older than the grace period (%s)", grace)
	a.log.Info("fsck deleted an unreferenced file", "path", st.info.Path, "kind", kind)
	return act
}

// producerFiles is the listing of one producer directory.
type producerFiles struct {
	producer string
	paths    []string // qualified, sorted
}

// listAllFiles lists every producer directory, in parallel.
func (a *Admin) listAllFiles(ctx context.Context) (map[string]*fileState, []producerFiles, error) {
	names, err := a.files.ListProducerDirs(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list producer directories: %w", err)
	}
	dirs := make([]producerFiles, len(names))
	var mu sync.Mutex
	files := map[string]*fileState{}
	err = a.parallel(ctx, len(names), func(i int) error {
		list, err := a.files.ListProducerFiles(ctx, names[i])
		if err != nil {
			return fmt.Errorf("list producer directory %s: %w", names[i], err)
		}
		dirs[i].producer = names[i]
		mu.Lock()
		defer mu.Unlock()
		for _, fi := range list {
			dirs[i].paths = append(dirs[i].paths, fi.Path)
			files[fi.Path] = &fileState{info: fi, producer: names[i]}
		}
		return nil
	})
	return files, dirs, err
}

// pathParts returns the producer and table directory names of a qualified
// offsets file path .../producers/{producer}/{table}/{file}.
func pathParts(qualified string) (producer, table string) {
	dir := path.Dir(qualified)
	return path.Base(path.Dir(dir)), path.Base(dir)
}

package remotestore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// dirAttempts bounds how many times one local write makes its directories
// again after a concurrent prune removed them.
const dirAttempts = 10

// writeLocal writes data to a new file rel under the local producers
// directory as fileblob does (a temporary file next to the target, renamed
// over it once complete), except that it survives cleanup.
//
// Orphan cleanup, on this sidecar or another sharing the directory, prunes
// a producer's directories once they are empty (PruneEmptyDirs). A write
// makes them, then creates its temporary file in them; a prune between the
// two (or between making the producer directory and the table directory
// inside it) removes what the write just made, and the create fails with
// "no such file or directory". Neither side can lock the other out: rmdir
// of an empty directory always wins. So the write makes the directories
// again and creates the file again, at once and without reporting a
// failure: once its temporary file is in the table directory, the
// directory is not empty and no prune can remove it. It gives up after
// dirAttempts, which would take as many prunes, each landing in the
// window of one create.
//
// A write whose context ended before the rename leaves nothing: a call
// given up must not go on to change anything.
func (s *Store) writeLocal(ctx context.Context, rel string, data io.WriterTo) error {
	target := filepath.Join(s.localProducers, filepath.FromSlash(rel))
	dir := filepath.Dir(target)
	var f *os.File
	for attempt := 1; ; attempt++ {
		err := os.MkdirAll(dir, 0o777)
		if err == nil {
			if s.dirsMade != nil {
				s.dirsMade(dir)
			}
			f, err = createTemp(target)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt >= dirAttempts {
			return err
		}
		s.log.Debug("a directory was pruned while an offsets file was written in it; making it again", "dir", dir, "attempt", attempt)
	}
	tmp := f.Name()
	_, err := data.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// createTemp creates a new file next to target, named as fileblob names
// its temporary files ("<name>.<hex nanoseconds>.tmp"; ListProducerFiles
// documents it), readable as fileblob's are.
func createTemp(target string) (*os.File, error) {
	for try := 0; ; try++ {
		name := target + "." + strconv.FormatInt(time.Now().UnixNano(), 16) + ".tmp"
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 1000 {
			continue
		}
		return f, err
	}
}

package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

type fsckResult struct {
	findings []string // "kind producer path-tail"
	actions  []string // "action kind path-tail"
	rep      FsckReport
}

func (e *env) fsck(opts FsckOptions) fsckResult {
	e.t.Helper()
	var r fsckResult
	tail := func(p string) string { return strings.TrimPrefix(p, "file:"+e.dir+"/producers/") }
	rep, err := e.admin.Fsck(e.t.Context(), opts, func(f Finding) error {
		s := f.Kind + " " + f.ProducerID + " " + tail(f.Path)
		if f.AgeSeconds != nil {
			s += fmt.Sprintf(" age=%d", *f.AgeSeconds)
		}
		r.findings = append(r.findings, s)
		return nil
	}, func(a Action) error {
		r.actions = append(r.actions, a.Action+" "+a.Kind+" "+tail(a.Path))
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	r.rep = rep
	return r
}

func exists(p string) bool {
	_, err := os.Stat(strings.TrimPrefix(p, "file:"))
	return err == nil
}

func TestFsckFindsAndRepairs(t *testing.T) {
	e := newEnv(t)
	old := now.Add(-2 * time.Hour)
	young := now.Add(-time.Minute)
	// A healthy snapshot and an old, legitimately unreferenced-looking
	// file of nobody: only the latter is reported.
	e.snapshot("good", now.Add(time.Hour), table(1, nb(0, 5)))
	// Dangling references: a missing file, and a path outside the store.
	e.znode("dangling", now, offsets.FileRef{TableID: 2, OffsetsPath: "file:" + e.dir + "/producers/dangling/2/gone.offsets"},
		offsets.FileRef{TableID: 3, OffsetsPath: "file:/etc/passwd"})
	// A znode that does not decode; its old file must survive repair.
	e.rawZnode("broken", []byte(`not json`))
	brokenFile := e.file("broken", "4", "b.offsets", table(4, nb(0, 1)), old)
	// A referenced file that does not decode.
	corrupt := e.rawFile("corrupt", "5", "c.offsets", []byte(`{"version":1,"table_id":`), old)
	e.znode("corrupt", now, offsets.FileRef{TableID: 5, OffsetsPath: corrupt})
	// Content disagreeing with the znode entry and with the directory:
	// the znode says table 6, the file sits in 6/ but holds table 7.
	mism := e.file("mism", "6", "m.offsets", table(7, nb(0, 1)), old)
	e.znode("mism", now, offsets.FileRef{TableID: 6, OffsetsPath: mism})
	// A znode naming a file in another producer's directory.
	foreign := e.file("good", "8", "f.offsets", table(8, nb(0, 1)), old)
	e.znode("borrower", now, offsets.FileRef{TableID: 8, OffsetsPath: foreign})
	// Unreferenced files: old orphan, young orphan, old temp, young temp,
	// an old orphan whose content disagrees with its directory, and an
	// orphan of a producer with no znode.
	oldOrphan := e.file("good", "1", "o-old.offsets", table(1, nb(0, 1)), old)
	youngOrphan := e.file("good", "1", "o-young.offsets", table(1, nb(0, 1)), young)
	oldTemp := e.rawFile("good", "1", "t.offsets.1a2b.tmp", []byte(`{"vers`), old)
	youngTemp := e.rawFile("good", "1", "u.offsets.3c4d.tmp", nil, young)
	misplaced := e.file("good", "9", "x.offsets", table(10, nb(0, 1)), old)
	noZnode := e.file("nobody", "11", "n.offsets", table(11, nb(0, 1)), old)

	r := e.fsck(FsckOptions{})
	if r.rep.Clean() || r.rep.Snapshots != 6 || r.rep.Files != 11 {
		t.Fatalf("report %+v", r.rep)
	}
	gotKinds := map[string]int{}
	for _, f := range r.findings {
		gotKinds[strings.Fields(f)[0]]++
	}
	wantKinds := map[string]int{KindDanglingReference: 2, KindMismatch: 3, KindUnreadableZnode: 1, KindUnreadableFile: 1, KindOrphanFile: 5, KindTemporaryFile: 2}
	if !reflect.DeepEqual(gotKinds, wantKinds) || !reflect.DeepEqual(r.rep.Findings, wantKinds) {
		t.Fatalf("finding kinds %v (report %v), want %v\n%s", gotKinds, r.rep.Findings, wantKinds, strings.Join(r.findings, "\n"))
	}
	wantFindings := []string{
		"mismatch borrower good/8/f.offsets",
		"unreadable_znode broken ",
		"unreadable_file corrupt corrupt/5/c.offsets",
		"dangling_reference dangling dangling/2/gone.offsets",
		"dangling_reference dangling file:/etc/passwd",
		"mismatch mism mism/6/m.offsets",
		"orphan_file broken broken/4/b.offsets age=7200",
		"orphan_file good good/1/o-old.offsets age=7200",
		"orphan_file good good/1/o-young.offsets age=60",
		"temporary_file good good/1/t.offsets.1a2b.tmp age=7200",
		"temporary_file good good/1/u.offsets.3c4d.tmp age=60",
		"mismatch good good/9/x.offsets",
		"orphan_file good good/9/x.offsets age=7200",
		"orphan_file nobody nobody/11/n.offsets age=7200",
	}
	if !slices.Equal(r.findings, wantFindings) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(r.findings, "\n"), strings.Join(wantFindings, "\n"))
	}
	if len(r.actions) != 0 {
		t.Fatalf("no repair asked, yet %v", r.actions)
	}
	for _, p := range []string{brokenFile, oldOrphan, youngOrphan, oldTemp, youngTemp, misplaced, noZnode, foreign} {
		if !exists(p) {
			t.Fatalf("fsck without --repair removed %s", p)
		}
	}

	// Repair: only old, unreferenced files of readable (or absent) znodes.
	r = e.fsck(FsckOptions{Repair: true, GracePeriod: time.Hour})
	wantActions := []string{
		"kept orphan_file broken/4/b.offsets",
		"deleted orphan_file good/1/o-old.offsets",
		"kept orphan_file good/1/o-young.offsets",
		"deleted temporary_file good/1/t.offsets.1a2b.tmp",
		"kept temporary_file good/1/u.offsets.3c4d.tmp",
		"deleted orphan_file good/9/x.offsets",
		"deleted orphan_file nobody/11/n.offsets",
	}
	if !slices.Equal(r.actions, wantActions) {
		t.Fatalf("actions:\n%s\nwant:\n%s", strings.Join(r.actions, "\n"), strings.Join(wantActions, "\n"))
	}
	if r.rep.Deleted != 4 || r.rep.Kept != 3 || r.rep.Failed != 0 || r.rep.Clean() {
		t.Fatalf("repair report %+v", r.rep)
	}
	for p, want := range map[string]bool{brokenFile: true, oldOrphan: false, youngOrphan: true, oldTemp: false,
		youngTemp: true, misplaced: false, noZnode: false, foreign: true, mism: true, corrupt: true} {
		if exists(p) != want {
			t.Errorf("%s exists=%v after repair, want %v", p, !want, want)
		}
	}

	// A grace period longer than every file's age deletes nothing.
	r = e.fsck(FsckOptions{Repair: true, GracePeriod: 3 * time.Hour})
	if r.rep.Deleted != 0 || r.rep.Kept != 3 {
		t.Fatalf("long grace: %+v %v", r.rep, r.actions)
	}
}

// A snapshot registered after fsck's scan names an old file the scan saw
// as an orphan: the re-check before deleting keeps it.
func TestFsckRepairRechecksZnode(t *testing.T) {
	e := newEnv(t)
	old := now.Add(-2 * time.Hour)
	p := e.file("late", "1", "l.offsets", table(1, nb(0, 1)), old)
	// No znode exists when fsck scans; the first read of "late" is the
	// re-check before deleting, and the snapshot appears just before it.
	e.admin.snaps = &hookSnapshots{Snapshots: e.admin.snaps, beforeRaw: func(id string) {
		if id == "late" {
			e.znode("late", now.Add(time.Hour), offsets.FileRef{TableID: 1, OffsetsPath: p})
		}
	}}
	r := e.fsck(FsckOptions{Repair: true, GracePeriod: time.Hour})
	if !slices.Equal(r.actions, []string{"kept orphan_file late/1/l.offsets"}) || !exists(p) {
		t.Fatalf("actions %v, file exists %v", r.actions, exists(p))
	}
}

type hookSnapshots struct {
	Snapshots
	beforeRaw func(id string)
}

func (h *hookSnapshots) RawSnapshot(ctx context.Context, id string) ([]byte, error) {
	h.beforeRaw(id)
	return h.Snapshots.RawSnapshot(ctx, id)
}

func TestFsckClean(t *testing.T) {
	e := newEnv(t)
	e.snapshot("a", now, table(1, nb(0, 1), nb(1, 2)))
	e.snapshot("b", now, table(2, pb(3, 0, 1)), table(4, nb(0, 0)))
	r := e.fsck(FsckOptions{Repair: true})
	if !r.rep.Clean() || len(r.findings) != 0 || len(r.actions) != 0 || r.rep.Files != 3 || r.rep.Snapshots != 2 {
		t.Fatalf("clean registry: %+v %v %v", r.rep, r.findings, r.actions)
	}
}

// TestCoordinatorOffsets: the files a Fluss 0.9.1 coordinator writes for
// input the sidecar refuses on REGISTER (offsets below 0, a bucket id past
// 131071; offsets/flussjson/testdata/offsets holds the coordinator's bytes)
// are read as the coordinator reads them: fsck finds nothing wrong and
// export lists their buckets.
func TestCoordinatorOffsets(t *testing.T) {
	e := newEnv(t)
	coordinatorFile := func(producer, name string) string {
		data, err := os.ReadFile(filepath.Join("..", "offsets", "flussjson", "testdata", "offsets", name))
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			TableID int64 `json:"table_id"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			t.Fatal(err)
		}
		path := e.rawFile(producer, strconv.FormatInt(head.TableID, 10), "", data, now.Add(-time.Hour))
		e.znode(producer, now, offsets.FileRef{TableID: head.TableID, OffsetsPath: path})
		return path
	}
	coordinatorFile("neg", "negative_offsets.json")
	coordinatorFile("negp", "negative_offsets_partitioned.json")
	coordinatorFile("past", "bucket_past_limit.json")
	if r := e.fsck(FsckOptions{Repair: true}); !r.rep.Clean() || len(r.findings) != 0 || len(r.actions) != 0 || r.rep.Files != 3 {
		t.Fatalf("fsck of a coordinator's files: %+v %v %v", r.rep, r.findings, r.actions)
	}
	var buf bytes.Buffer
	rw, err := NewRowWriter(FormatCSV, &buf)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.admin.Export(t.Context(), rw, func(s Skip) error { t.Errorf("skipped %+v", s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	exp := strconv.FormatInt(now.UnixMilli(), 10)
	want := strings.Join([]string{
		"producer_id,table_id,partition_id,bucket_id,log_end_offset,expiration_time,expired",
		"neg,5,,1,-5," + exp + ",false",
		"neg,5,,2,7," + exp + ",false",
		"neg,5,,3,-9223372036854775808," + exp + ",false",
		"negp,6,1,0,-2," + exp + ",false",
		"negp,6,3,2,3," + exp + ",false",
		"past,5,,131072,9," + exp + ",false",
	}, "\n") + "\n"
	if rep.Rows != 6 || buf.String() != want {
		t.Fatalf("export (%+v):\n%s\nwant:\n%s", rep, buf.String(), want)
	}
}

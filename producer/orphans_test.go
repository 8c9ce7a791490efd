package producer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

func TestCleanupOrphans(t *testing.T) {
	e := newEnv(t, "bare")
	e.clock.mu.Lock()
	e.clock.now = time.Now()
	e.clock.mu.Unlock()
	old := time.Now().Add(-2 * time.Hour)

	writeFile := func(rel, content string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(e.localDir, "producers", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const body = `{"version":1,"table_id":1,"bucket_offsets":[1]}`

	// live: a registered snapshot whose files are old; they are named by
	// the znode and must stay.
	mustRegister(t, e.reg, threeBucketsTwoTables("live"))
	liveFiles := e.filesOnDisk(t, "live")
	for _, f := range liveFiles {
		os.Chtimes(f, old, old)
	}
	oldOrphan := writeFile("live/1/00000000-0000-4000-8000-000000000001.offsets", body, old)
	freshOrphan := writeFile("live/1/00000000-0000-4000-8000-000000000002.offsets", body, time.Now())
	// noznode: files of a producer without a znode.
	gone := writeFile("noznode/3/00000000-0000-4000-8000-000000000003.offsets", body, old)
	inFlight := writeFile("inflight/3/00000000-0000-4000-8000-000000000004.offsets", body, time.Now())

	// java: a znode a Java coordinator wrote with a bare local path (W1).
	javaFile := writeFile("java/7/00000000-0000-4000-8000-000000000005.offsets", body, old)
	// broken: a znode that cannot be decoded (W4): its files must survive.
	brokenFile := writeFile("broken/8/00000000-0000-4000-8000-000000000006.offsets", body, old)
	conn := zktest.RawConn(t, zkAddr)
	acl := gozk.WorldACL(gozk.PermAll)
	conn.Create(e.root+"/producers/java", []byte(fmt.Sprintf(`{"version":1,"expiration_time":4102444800000,"tables":[{"table_id":7,"offsets_path":"%s"}]}`, javaFile)), 0, acl)
	if _, err := conn.Create(e.root+"/producers/broken", []byte(`{"version":2}`), 0, acl); err != nil {
		t.Fatal(err)
	}

	rep, err := e.reg.CleanupOrphans(t.Context(), e.files, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != 2 || rep.Kept != 2 || rep.Skipped != 1 {
		t.Fatalf("report %+v, want 2 deleted, 2 kept, 1 skipped", rep)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, p := range append(liveFiles, freshOrphan, inFlight, javaFile, brokenFile) {
		if !exists(p) {
			t.Errorf("%s was deleted", p)
		}
	}
	for _, p := range []string{oldOrphan, gone} {
		if exists(p) {
			t.Errorf("orphan %s survived", p)
		}
	}
	if exists(filepath.Join(e.localDir, "producers", "noznode")) {
		t.Error("the emptied producer directory was not pruned")
	}
	got, found := mustGet(t, e.reg, "live")
	if !found || len(flat(got.Tables)) != 3 {
		t.Fatalf("live snapshot damaged: %v", flat(got.Tables))
	}
	left := e.filesOnDisk(t, "live")
	sort.Strings(left)
	if len(left) != 3 {
		t.Fatalf("live producer files: %v", left)
	}
}

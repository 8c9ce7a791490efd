package admin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// nodeDir is where scripts/install-deps.sh installs the npm packages.
const nodeDir = "../.deps/node"

// needReaders makes sure node and the npm readers are there, running
// scripts/install-deps.sh (make test's dependency step) when they are not.
// Under -short (make check), which installs nothing, it skips the test.
func needReaders(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("reads the export back with node's apache-arrow and hyparquet (.deps/node); not run under -short")
	}
	have := func() bool {
		for _, p := range []string{"apache-arrow", "hyparquet"} {
			if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", p, "package.json")); err != nil {
				return false
			}
		}
		_, err := exec.LookPath("node")
		return err == nil
	}
	if have() {
		return
	}
	out, err := exec.Command("../scripts/install-deps.sh").CombinedOutput()
	if !have() {
		t.Fatalf("node with apache-arrow and hyparquet in %s is missing after scripts/install-deps.sh (%v):\n%s", nodeDir, err, out)
	}
}

// readBack reads an export with testdata/readback.mjs (apache-arrow,
// hyparquet, or plain string handling) and returns its header line and rows
// as canonical JSON arrays.
func readBack(t testing.TB, format, file string) (header map[string]any, rows []string) {
	t.Helper()
	script, err := os.ReadFile("testdata/readback.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "--input-type=module", "-e", string(script), format, file)
	cmd.Dir = nodeDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("readback %s: %v\n%s", format, err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	first := true
	for sc.Scan() {
		if first {
			first = false
			if err := json.Unmarshal(sc.Bytes(), &header); err != nil {
				t.Fatal(err)
			}
			continue
		}
		rows = append(rows, sc.Text())
	}
	return header, rows
}

// canonical is a row as readback.mjs prints it.
func canonical(r Row) string {
	var part any
	if r.PartitionID != nil {
		part = strconv.FormatInt(*r.PartitionID, 10)
	}
	b, _ := json.Marshal([]any{r.ProducerID, strconv.FormatInt(r.TableID, 10), part, r.BucketID,
		strconv.FormatInt(r.LogEndOffset, 10), strconv.FormatInt(r.ExpirationTime, 10), r.Expired})
	return string(b)
}

func i64(v int64) *int64 { return &v }

func TestExportAllFormats(t *testing.T) {
	needReaders(t)
	e := newEnv(t)
	live := now.Add(time.Hour).UnixMilli()
	expired := now.Add(-time.Hour).UnixMilli()
	e.snapshot("job-a", now.Add(time.Hour),
		table(math.MaxInt64, nb(0, math.MaxInt64), nb(2, 0)),
		table(7, pb(-1, 0, 5), pb(1<<40, 3, 9), pb(1<<40, 4, -1+1)))
	e.snapshot("job-b", now.Add(-time.Hour), table(1, nb(1000, 1<<53+1)))
	e.snapshot("job-c", now) // no tables: no rows
	e.rawZnode("job-d", []byte(`{}`))
	e.znode("job-e", now, offsets.FileRef{TableID: 3, OffsetsPath: "/nowhere/x.offsets"})

	want := []Row{
		{"job-a", math.MaxInt64, nil, 0, math.MaxInt64, live, false},
		{"job-a", math.MaxInt64, nil, 2, 0, live, false},
		{"job-a", 7, i64(-1), 0, 5, live, false},
		{"job-a", 7, i64(1 << 40), 3, 9, live, false},
		{"job-a", 7, i64(1 << 40), 4, 0, live, false},
		{"job-b", 1, nil, 1000, 1<<53 + 1, expired, true},
	}
	var wantRows []string
	for _, r := range want {
		wantRows = append(wantRows, canonical(r))
	}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out."+format)
			var skips []string
			rep, err := e.admin.ExportFile(t.Context(), format, path, func(s Skip) error {
				skips = append(skips, s.ProducerID+" "+s.Path)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep != (ExportReport{Snapshots: 5, Rows: 6, Skipped: 2}) || !reflect.DeepEqual(skips, []string{"job-d ", "job-e /nowhere/x.offsets"}) {
				t.Fatalf("report %+v skips %v", rep, skips)
			}
			header, rows := readBack(t, format, path)
			if !reflect.DeepEqual(rows, wantRows) {
				t.Fatalf("rows read back:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
			}
			schema := fmt.Sprint(header["schema"])
			wantSchema := map[string]string{
				FormatArrow:   "[[producer_id Utf8 false] [table_id Int64 false] [partition_id Int64 true] [bucket_id Int32 false] [log_end_offset Int64 false] [expiration_time Int64 false] [expired Bool false]]",
				FormatParquet: "[[producer_id BYTE_ARRAY REQUIRED] [table_id INT64 REQUIRED] [partition_id INT64 OPTIONAL] [bucket_id INT32 REQUIRED] [log_end_offset INT64 REQUIRED] [expiration_time INT64 REQUIRED] [expired BOOLEAN REQUIRED]]",
				FormatCSV:     "[producer_id table_id partition_id bucket_id log_end_offset expiration_time expired]",
				FormatJSONL:   "[producer_id table_id partition_id bucket_id log_end_offset expiration_time expired]",
			}[format]
			if schema != wantSchema {
				t.Fatalf("schema %s, want %s", schema, wantSchema)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp"))
			if len(left) != 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
}

func TestExportGoldenCSVAndJSONL(t *testing.T) {
	e := newEnv(t)
	e.snapshot("p1", now.Add(time.Hour), table(5, pb(2, 1, 10)), table(6, nb(0, 3)))
	e.snapshot("p2", now.Add(-time.Hour), table(6, nb(1, 4)))
	for _, format := range []string{FormatCSV, FormatJSONL} {
		var buf bytes.Buffer
		rw, err := NewRowWriter(format, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.Export(t.Context(), rw, func(Skip) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "export."+format)
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Fatalf("%s:\n%s\nwant (%s):\n%s", format, buf.String(), golden, want)
		}
	}
}

func TestExportRefusesUnknownFormat(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "x")
	if _, err := e.admin.ExportFile(t.Context(), "xlsx", path, nil); err == nil || !strings.Contains(err.Error(), "unknown export format") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

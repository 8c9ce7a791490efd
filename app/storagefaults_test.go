package app_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/faultrelay"
	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The storage fault matrix. One sidecar per backend stores its
// offsets files through a fault: a faultrelay between the sidecar and each
// emulator (gofakes3, fake-gcs-server, Azurite), or a full or read-only
// tmpfs for file://. Under each fault it serves REGISTER, GET and DELETE
// while cleanup runs, then the fault ends and the test checks:
//   - every answer was a success or a retriable code (a read-only disk may
//     also answer the documented permanent "storage refused access");
//   - every producer whose znode exists reads back whole: no offsets file
//     named by a znode is missing;
//   - every REGISTER answered CREATED reads back with its exact offsets, and
//     one that failed but was applied carries its own offsets, not a mix;
//   - every object under producers/ decodes (nothing half-written), and no
//     temporary file is left;
//   - the process never panicked (no "panic" in its log, none contained);
//   - the fault was exercised (the relay faulted connections, or remote
//     storage calls failed).

// faultBackend is one storage backend of the matrix.
type faultBackend struct {
	name   string
	kv     map[string]string // remote.data.dir and its keys, through the fault
	faults []string
	set    func(t *testing.T, fault string) // "" ends the fault
	// exercised reports whether the fault met any traffic since set.
	exercised func() bool
	// inspect opens the same remote.data.dir without the fault.
	inspect func(t *testing.T) *remotestore.Store
}

func relayFaults() []string {
	var out []string
	for _, f := range faultrelay.Faults {
		out = append(out, f.String())
	}
	return out
}

func relayBackend(t *testing.T, name, target string, kv func(endpoint string) map[string]string, direct remotestore.Options) faultBackend {
	r, err := faultrelay.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	var mark int64
	b := faultBackend{name: name, kv: kv(r.URL()), faults: relayFaults()}
	b.set = func(t *testing.T, fault string) {
		f := faultrelay.None
		for _, g := range faultrelay.Faults {
			if g.String() == fault {
				f = g
			}
		}
		mark = r.Faulted()
		if err := r.Set(f); err != nil {
			t.Fatal(err)
		}
	}
	b.exercised = func() bool { return r.Faulted() > mark }
	b.inspect = func(t *testing.T) *remotestore.Store {
		s, err := remotestore.Open(context.Background(), b.kv["remote.data.dir"], direct)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return b
}

func hostPort(url string) string {
	h := strings.TrimPrefix(url, "http://")
	h, _, _ = strings.Cut(h, "/")
	return h
}

func s3FaultBackend(t *testing.T) faultBackend {
	url, _ := storagetest.StartS3(t, "fluss")
	kv := func(endpoint string) map[string]string {
		return map[string]string{"remote.data.dir": "s3://fluss/faults", "s3.endpoint": endpoint, "s3.region": "us-east-1",
			"s3.access-key": "k", "s3.secret-key": "s", "s3.path.style.access": "true"}
	}
	return relayBackend(t, "s3", hostPort(url), kv, remotestore.Options{Remote: remote.Options{S3Endpoint: url, S3Region: "us-east-1", S3AccessKey: "k", S3SecretKey: "s", S3PathStyle: true}})
}

func gcsFaultBackend(t *testing.T) faultBackend {
	url, _ := storagetest.StartGCS(t, "fluss")
	kv := func(endpoint string) map[string]string {
		return map[string]string{"remote.data.dir": "gs://fluss/faults", "fs.gs.storage.root.url": endpoint + "/", "fs.gs.auth.type": "UNAUTHENTICATED"}
	}
	return relayBackend(t, "gs", hostPort(url), kv, remotestore.Options{Remote: remote.Options{GCS: remote.GCSOptions{Endpoint: url, Unauthenticated: true}}})
}

func azureFaultBackend(t *testing.T) faultBackend {
	endpoint := storagetest.StartAzurite(t, "fluss")
	dir := "abfs://fluss@" + storagetest.AzuriteAccount + ".dfs.core.windows.net/" + strings.ReplaceAll(t.Name(), "/", "_")
	kv := func(relayURL string) map[string]string {
		return map[string]string{"remote.data.dir": dir, "fs.azure.account.key": storagetest.AzuriteKey,
			app.KeyAzureEndpoint: relayURL + "/" + storagetest.AzuriteAccount}
	}
	return relayBackend(t, "abfs", hostPort(endpoint), kv, remotestore.Options{Remote: remote.Options{Azure: remote.AzureOptions{AccountKey: storagetest.AzuriteKey, Endpoint: endpoint}}})
}

// fileFaultBackend puts remote.data.dir on a small tmpfs (root only, as
// remote's full-disk and read-only tests): "full" fills it with a filler
// file, "read-only" remounts it read-only.
func fileFaultBackend(t *testing.T) (faultBackend, bool) {
	if os.Geteuid() != 0 {
		return faultBackend{}, false
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("cannot mount a tmpfs here: %v: %s", err, out)
		return faultBackend{}, false
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	filler := filepath.Join(dir, "filler")
	var current string
	b := faultBackend{name: "file", kv: map[string]string{"remote.data.dir": "file://" + dir}, faults: []string{"full", "read-only"}}
	b.set = func(t *testing.T, fault string) {
		switch {
		case fault == "full":
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 64<<10)
			for {
				if _, err := f.Write(chunk); err != nil {
					break // ENOSPC: the disk is full
				}
			}
			f.Close()
		case fault == "read-only":
			if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
				t.Fatalf("remount ro: %v: %s", err, out)
			}
		case current == "full":
			os.Remove(filler)
		case current == "read-only":
			if out, err := exec.Command("mount", "-o", "remount,rw", dir).CombinedOutput(); err != nil {
				t.Fatalf("remount rw: %v: %s", err, out)
			}
		}
		current = fault
	}
	b.exercised = func() bool { return false } // so the failed storage calls are checked
	b.inspect = func(t *testing.T) *remotestore.Store {
		s, err := remotestore.Open(context.Background(), "file://"+dir, remotestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return b, true
}

func TestStorageFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the storage fault matrix runs emulators and faults for about a minute")
	}
	backends := []func(t *testing.T) (faultBackend, bool){
		func(t *testing.T) (faultBackend, bool) { return s3FaultBackend(t), true },
		func(t *testing.T) (faultBackend, bool) { return gcsFaultBackend(t), true },
		func(t *testing.T) (faultBackend, bool) { return azureFaultBackend(t), true },
		fileFaultBackend,
	}
	for i, open := range backends {
		t.Run([]string{"s3", "gs", "abfs", "file"}[i], func(t *testing.T) {
			t.Parallel()
			b, ok := open(t)
			if !ok {
				t.Skip("file:// faults need root to mount a tmpfs")
			}
			runFaultMatrix(t, b)
		})
	}
}

// offsetsOf are one producer's offsets: table id -> bucket id -> offset.
type offsetsOf map[int64]map[int32]int64

func offsetsFor(n int) offsetsOf {
	return offsetsOf{
		1: {0: int64(1000 + n), 3: int64(2000 + n)},
		2: {1: int64(3000 + n)},
	}
}

func (o offsetsOf) request(id string, ttlMs int64) *messages.RegisterProducerOffsetsRequest {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TtlMs: proto.Int64(ttlMs)}
	for _, table := range slices.Sorted(mapKeys(o)) {
		pt := &messages.PbProducerTableOffsets{TableId: proto.Int64(table)}
		for _, bucket := range slices.Sorted(mapKeys(o[table])) {
			pt.BucketOffsets = append(pt.BucketOffsets, &messages.PbBucketOffset{BucketId: proto.Int32(bucket), LogEndOffset: proto.Int64(o[table][bucket])})
		}
		req.TableOffsets = append(req.TableOffsets, pt)
	}
	return req
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func offsetsFromResponse(resp *messages.GetProducerOffsetsResponse) offsetsOf {
	o := offsetsOf{}
	for _, pt := range resp.GetTableOffsets() {
		m := map[int32]int64{}
		for _, bo := range pt.GetBucketOffsets() {
			m[bo.GetBucketId()] = bo.GetLogEndOffset()
		}
		o[pt.GetTableId()] = m
	}
	return o
}

func (o offsetsOf) String() string { return fmt.Sprint(map[int64]map[int32]int64(o)) }

func (o offsetsOf) equal(p offsetsOf) bool { return o.String() == p.String() }

const (
	liveTTL   = 7 * 24 * 3600 * 1000 // ms; never expires during the test
	expireTTL = 1                    // ms; expired by the next cleanup round
)

// answer is what one request got.
type answer struct {
	op, id string
	err    error
	// For a REGISTER: created. For a GET: found and its offsets.
	created bool
	found   bool
	got     offsetsOf
}

func runFaultMatrix(t *testing.T, b faultBackend) {
	var logs syncbuf.Buffer
	kv := reporterOn(map[string]string{
		"sidecar.request-timeout":          "2s",
		app.KeyStorageStartChecks:          "1",
		app.KeyCacheMaxBytes:               "0", // GETs read storage, not memory
		app.KeyCleanupInterval:             "100ms",
		app.KeyStorageCheckInterval:        "1h", // readiness is TestReadyzStorageStopsAcceptingWrites's
		"sidecar.log.level":                "info",
		"zookeeper.client.session-timeout": "10s", // bounds a write that outlives its request
	})
	for k, v := range b.kv {
		kv[k] = v
	}
	cfg := apptest.Config(t, sharedZK, kv)
	a := apptest.StartConfig(t, cfg, app.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	// A second store through the same fault, for the orphan scan run
	// below (the registry takes the store to scan as an argument).
	settings, err := app.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ropts := settings.RemoteOptions(nil)
	ropts.AttemptTimeout = settings.RequestTimeout
	faulted, err := remotestore.Open(context.Background(), settings.RemoteDataDir, ropts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { faulted.Close() })
	// End the fault before the sidecar closes, also when a check failed.
	t.Cleanup(func() { b.set(t, "") })
	inspect := b.inspect(t)

	// Each call has its own generous deadline: the sidecar answers within
	// its request timeout, so this one only keeps a broken test from
	// hanging.
	call := func(op string, id string, req, resp proto.Message) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
		if err != nil {
			return fmt.Errorf("dial: %w", err)
		}
		defer c.Close()
		key := map[string]messages.Key{"register": 1053, "get": 1054, "delete": 1055}[op]
		return c.Call(ctx, key, 0, req, resp)
	}
	register := func(id string, o offsetsOf, ttl int64) answer {
		resp := &messages.RegisterProducerOffsetsResponse{}
		err := call("register", id, o.request(id, ttl), resp)
		return answer{op: "register", id: id, err: err, created: err == nil && resp.GetResult() == 0}
	}
	get := func(id string) answer {
		resp := &messages.GetProducerOffsetsResponse{}
		err := call("get", id, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp)
		return answer{op: "get", id: id, err: err, found: err == nil && len(resp.GetTableOffsets()) > 0, got: offsetsFromResponse(resp)}
	}
	del := func(id string) answer {
		err := call("delete", id, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{})
		return answer{op: "delete", id: id, err: err}
	}
	remoteErrors := func() float64 {
		return max(0, value(scrape(t, a), "fluss_sidecar_storage_errorsTotal", "store=remote"))
	}

	// sent is every producer id used and the offsets its REGISTER carried.
	sent := map[string]offsetsOf{}
	n := 0
	for _, fault := range b.faults {
		t.Run(fault, func(t *testing.T) {
			ctx := t.Context()
			// Before the fault: producers to read, delete and expire.
			var toGet, toDelete []string
			for i := range 2 {
				for _, kind := range []string{"get", "delete", "expire"} {
					n++
					id := fmt.Sprintf("%s-%s-%s-%d", b.name, fault, kind, i)
					o := offsetsFor(n)
					sent[id] = o
					ttl := int64(liveTTL)
					if kind == "expire" {
						ttl = expireTTL
					}
					if ans := register(id, o, ttl); !ans.created {
						t.Fatalf("register %s before the fault: %v", id, ans.err)
					}
					switch kind {
					case "get":
						toGet = append(toGet, id)
					case "delete":
						toDelete = append(toDelete, id)
					}
				}
			}
			errorsBefore := remoteErrors()
			b.set(t, fault)

			var mu sync.Mutex
			var answers []answer
			var wg sync.WaitGroup
			run := func(f func() answer) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ans := f()
					mu.Lock()
					answers = append(answers, ans)
					mu.Unlock()
				}()
			}
			for i := range 4 {
				n++
				id := fmt.Sprintf("%s-%s-register-%d", b.name, fault, i)
				o := offsetsFor(n)
				sent[id] = o
				run(func() answer { return register(id, o, liveTTL) })
			}
			for _, id := range toGet {
				run(func() answer { return get(id) })
			}
			for _, id := range toDelete {
				run(func() answer { return del(id) })
			}
			// Cleanup under the fault: the periodic rounds run all along
			// (every 100 ms); one more of each half runs here, so both
			// surely meet the fault, each bounded as a round would be by
			// the shutdown of the sidecar.
			cctx, cancel := context.WithTimeout(context.Background(), 4*settings.RequestTimeout)
			if _, err := a.Registry().CleanupExpired(cctx); err != nil {
				t.Logf("expired cleanup under %s: %v", fault, err)
			}
			if _, err := a.Registry().CleanupOrphans(cctx, faulted, settings.OrphanGracePeriod); err != nil {
				t.Logf("orphan cleanup under %s: %v", fault, err)
			}
			cancel()
			wg.Wait()
			if !b.exercised() && remoteErrors() == errorsBefore {
				t.Errorf("fault %s met no traffic: nothing faulted, no remote storage call failed", fault)
			}
			b.set(t, "")
			if err := a.Registry().Wait(ctx); err != nil {
				t.Fatalf("writes still settling: %v", err)
			}

			// What each operation answered, for docs/limits.md.
			tally := map[string]int{}
			for _, ans := range answers {
				what := "ok"
				if fe, ok := flusserr.From(ans.err); ok {
					what = fe.Code.Name()
				} else if ans.err != nil {
					what = "error"
				}
				tally[ans.op+" "+what]++
			}
			t.Logf("answers under %s/%s: %v", b.name, fault, tally)
			// Every answer: success or retriable.
			for _, ans := range answers {
				if ans.err == nil {
					continue
				}
				fe, ok := flusserr.From(ans.err)
				switch {
				case !ok:
					t.Errorf("%s %s: not an API error (connection lost?): %v", ans.op, ans.id, ans.err)
				case fe.Retriable():
				case fault == "read-only" && fe.Code == flusserr.UnknownServerError && strings.Contains(fe.Message, "refused access"):
				default:
					t.Errorf("%s %s: %s (%d) is not retriable: %s", ans.op, ans.id, fe.Code.Name(), fe.Code, fe.Message)
				}
			}
			// Once the fault ends: what was CREATED reads back exactly,
			// and every snapshot that exists reads back whole.
			created := map[string]bool{}
			deleted := map[string]bool{}
			for _, ans := range answers {
				created[ans.id] = created[ans.id] || ans.created
				deleted[ans.id] = deleted[ans.id] || (ans.op == "delete" && ans.err == nil)
				if ans.op == "get" && ans.err == nil && !ans.got.equal(sent[ans.id]) {
					t.Errorf("get %s under the fault answered %v, registered %v", ans.id, ans.got, sent[ans.id])
				}
			}
			for _, id := range slices.Sorted(mapKeys(sent)) {
				ans := get(id)
				switch {
				case ans.err != nil:
					t.Errorf("get %s after the fault: %v", id, ans.err)
				case created[id] && !ans.found:
					t.Errorf("%s was answered CREATED but is gone", id)
				case deleted[id] && ans.found:
					t.Errorf("%s was deleted but reads back %v", id, ans.got)
				case ans.found && !ans.got.equal(sent[id]):
					t.Errorf("%s reads back %v, registered %v", id, ans.got, sent[id])
				}
			}
			checkNothingHalfWritten(t, ctx, inspect)
		})
		if t.Failed() {
			break
		}
	}
	out := logs.String()
	if strings.Contains(strings.ToLower(out), "panic") {
		t.Errorf("the sidecar's log mentions a panic:\n%s", out)
	}
	if got := value(scrape(t, a), "fluss_sidecar_storage_driverPanicsTotal"); got > 0 {
		t.Errorf("%v driver panics contained", got)
	}
}

// checkNothingHalfWritten reads every object under producers/ without the
// fault: each is a complete offsets file.
func checkNothingHalfWritten(t *testing.T, ctx context.Context, s *remotestore.Store) {
	t.Helper()
	dirs, err := s.ListProducerDirs(ctx)
	if err != nil {
		t.Fatalf("list producers: %v", err)
	}
	for _, d := range dirs {
		files, err := s.ListProducerFiles(ctx, d)
		if err != nil {
			t.Fatalf("list %s: %v", d, err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Path, remotestore.OffsetsFileSuffix) {
				t.Errorf("left behind: %s", f.Path)
				continue
			}
			if _, err := s.ReadOffsets(ctx, f.Path); err != nil && !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("half-written: %s: %v", f.Path, err)
			}
		}
	}
}

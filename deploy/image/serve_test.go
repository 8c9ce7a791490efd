//go:build linux

package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// imageUser parses the image configuration's numeric "uid:gid".
func imageUser(t *testing.T, img *ociImage) (uid, gid uint32) {
	t.Helper()
	u, g, ok := strings.Cut(img.config.Config.User, ":")
	uu, err1 := strconv.ParseUint(u, 10, 32)
	gg, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("image user %q is not a numeric uid:gid", img.config.Config.User)
	}
	return uint32(uu), uint32(gg)
}

// imageCommand is args run in the unpacked image at root as the image's
// user: chrooted there (so only the image's files are visible: no libc, no
// host configuration), no supplementary groups, only the image's
// environment, killed if the test process dies.
func imageCommand(t *testing.T, img *ociImage, root string, args ...string) *exec.Cmd {
	t.Helper()
	uid, gid := imageUser(t, img)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.Env = append([]string{}, img.config.Config.Env...) // not nil: nothing from the test's environment
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd
}

// entrypointCmd is the image's entry point followed by args, or by its
// command when args is empty.
func entrypointCmd(img *ociImage, args ...string) []string {
	if len(args) == 0 {
		args = img.config.Config.Cmd
	}
	return append(append([]string{}, img.config.Config.Entrypoint...), args...)
}

// TestImageVersion: the image's entry point runs in its own root file
// system as its user, and is this build's binary.
func TestImageVersion(t *testing.T) {
	img := builtImage(t)
	root := unpack(t, img)
	out, err := imageCommand(t, img, root, entrypointCmd(img, "version")...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v in the image: %v\n%s", entrypointCmd(img, "version"), err, out)
	}
	for _, want := range []string{testVersion, testCommit, testBuildTime} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}

// TestImageServes unpacks the image, writes a server.yaml into its
// /etc/fluss-sidecar, starts its entry point and command as its user in a
// chroot against a test ZooKeeper, and checks /readyz, a
// register/get/delete over the Fluss protocol, a scrape of /metrics, the
// process's user and root, that the offsets files it wrote under
// /var/lib/fluss-sidecar are its user's, a clean stop on SIGTERM, and that it
// wrote nothing outside its remote.data.dir.
func TestImageServes(t *testing.T) {
	img := builtImage(t)
	zk := zktest.StartT(t)
	root := unpack(t, img)
	uid, gid := imageUser(t, img)

	rpcPort := zktest.LoopbackPort(t)
	metricsPort := zktest.LoopbackPort(t)
	cmdLine := entrypointCmd(img)
	cfgFile, err := configFileArg(cmdLine)
	if err != nil {
		t.Fatalf("image command %q: %v", cmdLine, err)
	}
	yaml := fmt.Sprintf(`bind.listeners: FLUSS://127.0.0.1:%d
zookeeper.address: %s
zookeeper.path.root: %s
remote.data.dir: file:///var/lib/fluss-sidecar/remote
metrics.reporters: prometheus
metrics.reporter.prometheus.port: %d
sidecar.metrics.host: 127.0.0.1
`, rpcPort, zk.Addr, zktest.UniqueRoot(), metricsPort)
	if err := os.WriteFile(filepath.Join(root, cfgFile), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	var logs syncbuf.Buffer
	cmd := imageCommand(t, img, root, cmdLine...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q in the image: %v", cmdLine, err)
	}
	// exited is closed once the process has been waited for; waitErr is
	// then its exit.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("sidecar output:\n%s", logs.String())
		}
	})

	// A guard against a hang, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	waitReady(ctx, t, fmt.Sprintf("http://127.0.0.1:%d/readyz", metricsPort), exited, &waitErr)

	// A scrape answers, naming this build.
	scrape, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(scrape.Body)
	scrape.Body.Close()
	wantInfo := fmt.Sprintf(`fluss_sidecar_build_info{build_time=%q,commit=%q,`, testBuildTime, testCommit)
	if err != nil || scrape.StatusCode != http.StatusOK || !strings.Contains(string(body), wantInfo) {
		t.Errorf("/metrics: %d %v, want 200 with %s...", scrape.StatusCode, err, wantInfo)
	}

	// The process runs as the image's user, with no groups, in the image's
	// root.
	pid := cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := map[string]string{
		"Uid:":    strings.Repeat(" "+strconv.Itoa(int(uid)), 4),
		"Gid:":    strings.Repeat(" "+strconv.Itoa(int(gid)), 4),
		"Groups:": "",
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		if want, ok := wantIDs[k]; ok {
			if got := " " + strings.Join(strings.Fields(v), " "); strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("process %s %q, want %q", k, strings.TrimSpace(got), strings.TrimSpace(want))
			}
			delete(wantIDs, k)
		}
	}
	if len(wantIDs) != 0 {
		t.Errorf("/proc/%d/status lacks %v", pid, wantIDs)
	}
	if r, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid)); err != nil || r != root {
		t.Errorf("process root %q (%v), want the unpacked image %s", r, err, root)
	}

	// Register, get, delete over the Fluss protocol.
	c, err := wire.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", rpcPort), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatalf("API_VERSIONS: %v", err)
	}
	const producer = "image-job"
	reg := &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(producer),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId: proto.Int64(100),
			BucketOffsets: []*messages.PbBucketOffset{
				{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)},
				{BucketId: proto.Int32(1), LogEndOffset: proto.Int64(7)},
			},
		}},
	}
	regResp := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, reg, regResp); err != nil {
		t.Fatalf("REGISTER_PRODUCER_OFFSETS: %v", err)
	}
	if regResp.GetResult() != 0 {
		t.Fatalf("register result %d, want 0 (created)", regResp.GetResult())
	}
	get := func() *messages.GetProducerOffsetsResponse {
		t.Helper()
		resp := &messages.GetProducerOffsetsResponse{}
		if err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(producer)}, resp); err != nil {
			t.Fatalf("GET_PRODUCER_OFFSETS: %v", err)
		}
		return resp
	}
	got := get()
	if got.GetProducerId() != producer || len(got.GetTableOffsets()) != 1 || !proto.Equal(got.GetTableOffsets()[0], reg.TableOffsets[0]) {
		t.Fatalf("get after register: %v, want %v", got, reg.TableOffsets)
	}

	// The offsets file is under the image's writable directory, owned by
	// the image's user, as is every directory the sidecar made there.
	var files int
	remote := filepath.Join(root, "var/lib/fluss-sidecar/remote")
	err = filepath.WalkDir(remote, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uid || st.Gid != gid {
			t.Errorf("%s is owned by %d:%d, want %d:%d", strings.TrimPrefix(p, root), st.Uid, st.Gid, uid, gid)
		}
		if strings.HasSuffix(p, ".offsets") {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != 1 {
		t.Errorf("%d offsets files under /var/lib/fluss-sidecar/remote, want 1", files)
	}

	if err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(producer)}, &messages.DeleteProducerOffsetsResponse{}); err != nil {
		t.Fatalf("DELETE_PRODUCER_OFFSETS: %v", err)
	}
	if got := get(); got.ProducerId != nil {
		t.Fatalf("get after delete: %v, want no snapshot", got)
	}
	c.Close()

	// SIGTERM drains and stops with status 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("after SIGTERM: %v, want exit status 0", waitErr)
		}
	case <-ctx.Done():
		t.Fatal("the sidecar did not stop after SIGTERM")
	}

	// It wrote nowhere but its remote.data.dir: with a read-only root file
	// system and a read-only configuration mount (as the Kubernetes
	// manifests run it), only that directory needs to be writable.
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if _, ok := img.entry(rel); ok || rel == "." || rel == strings.TrimPrefix(cfgFile, "/") {
			return nil
		}
		if rel == "var/lib/fluss-sidecar/remote" || strings.HasPrefix(rel, "var/lib/fluss-sidecar/remote/") {
			return nil
		}
		t.Errorf("the sidecar wrote /%s, outside its remote.data.dir", rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitReady polls url until it answers 200, failing the test if the
// process exits first (exited closed, *waitErr its exit) or ctx ends.
func waitReady(ctx context.Context, t *testing.T, url string, exited <-chan struct{}, waitErr *error) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	eventually.Nil(t, url+" to answer 200", func() error {
		select {
		case <-exited:
			t.Fatalf("the sidecar exited before %s answered 200: %v", url, *waitErr)
		default:
		}
		resp, err := client.Get(url)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("%s never answered 200 (last: %v)", url, err)
			}
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			if ctx.Err() != nil {
				t.Fatalf("%s never answered 200 (last: %s)", url, resp.Status)
			}
			return errors.New(resp.Status)
		}
		return nil
	})
}

// configFileArg returns the --config argument of a serve command line.
func configFileArg(args []string) (string, error) {
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			return args[i+1], nil
		}
	}
	return "", errors.New("no --config FILE")
}

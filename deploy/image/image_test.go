// Package image builds the container image the way an operator without a
// Docker daemon does (scripts/build-image.sh, buildah, an OCI layout) and
// checks it: the same final stage as the Dockerfile, nothing in it but the
// binary, the CA bundle and the two directories, and, unpacked and started
// as the image's user in a chroot, a sidecar that answers /readyz and a
// register/get/delete against a test ZooKeeper.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Stamped into the image's binary by the build below, so that the tests can
// tell it is this build's binary that runs.
const (
	testVersion   = "image-test"
	testCommit    = "0123456789abcdef0123456789abcdef01234567"
	testBuildTime = "2026-01-02T03:04:05Z"
)

// stamps are the -X variables the build sets, as make build does, with the
// values this test gives them.
var stamps = map[string]string{
	"github.com/fluss-sidecar/fluss-sidecar/buildinfo.version":   testVersion,
	"github.com/fluss-sidecar/fluss-sidecar/buildinfo.commit":    testCommit,
	"github.com/fluss-sidecar/fluss-sidecar/buildinfo.buildTime": testBuildTime,
}

// imageUID and imageGID are the image's user, as the Dockerfile names it.
const imageUID, imageGID = 65532, 65532

// hostCABundle is where Debian's ca-certificates package puts the bundle the
// build copies into the image.
const hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	built     *ociImage
	buildErr  error
	buildSkip string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// builtImage builds the image once for the package with
// scripts/build-image.sh into an OCI layout directory. It skips the test
// only where buildah cannot run here, saying why, and under -short (make
// check), which builds no image.
func builtImage(t *testing.T) *ociImage {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the image with buildah as root; not run under -short")
	}
	buildOnce.Do(func() { built, buildSkip, buildErr = build() })
	if buildSkip != "" {
		t.Skip(buildSkip)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func build() (*ociImage, string, error) {
	if _, err := exec.LookPath("buildah"); err != nil {
		return nil, "buildah is not installed (Debian package buildah; scripts/install-deps.sh installs it)", nil
	}
	if os.Geteuid() != 0 {
		return nil, "not root: the build uses buildah as root with a private storage, and the image is started in a chroot as uid 65532", nil
	}
	dir, err := os.MkdirTemp("", "fluss-sidecar-image-test-")
	if err != nil {
		return nil, "", err
	}
	buildDir = dir
	out := filepath.Join(dir, "oci")
	cmd := exec.Command("../../scripts/build-image.sh", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "VERSION="+testVersion, "COMMIT="+testCommit, "BUILD_TIME="+testBuildTime)
	if msg, err := cmd.CombinedOutput(); err != nil {
		if reason := buildahRefuses(dir); reason != "" {
			return nil, reason, nil
		}
		return nil, "", fmt.Errorf("scripts/build-image.sh: %v\n%s", err, msg)
	}
	// The script removes its buildah storage and working container: only
	// the output is left.
	left, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	if len(left) != 1 || left[0].Name() != "oci" {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		return nil, "", fmt.Errorf("scripts/build-image.sh left %v in its TMPDIR, want only its output", names)
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil && bytes.Contains(mounts, []byte(dir)) {
		return nil, "", fmt.Errorf("scripts/build-image.sh left a mount under %s", dir)
	}
	img, err := readOCI(out)
	return img, "", err
}

// buildahRefuses tries the least buildah can do (an empty working container
// in a private storage): if that fails too, buildah cannot run here and the
// answer says why; otherwise it is "".
func buildahRefuses(dir string) string {
	store := filepath.Join(dir, "probe")
	defer os.RemoveAll(store)
	b := []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}
	out, err := exec.Command("buildah", append(b, "from", "scratch")...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("buildah cannot run here (buildah from scratch: %v: %s)", err, bytes.TrimSpace(out))
	}
	exec.Command("buildah", append(b, "rm", "--all")...).Run()
	return ""
}

// ociImage is the one image of an OCI layout directory.
type ociImage struct {
	dir      string
	manifest ociManifest
	config   ociConfig
	entries  []layerEntry // the layer's entries, in archive order
	size     int64        // manifest, config and layer blobs, in bytes
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type ociManifest struct {
	Config      ociDescriptor     `json:"config"`
	Layers      []ociDescriptor   `json:"layers"`
	Annotations map[string]string `json:"annotations"`
}

// ociConfig is the image configuration, with the runtime settings the
// Dockerfile's final stage sets.
type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User         string              `json:"User"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Env          []string            `json:"Env"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		WorkingDir   string              `json:"WorkingDir"`
		Volumes      map[string]struct{} `json:"Volumes"`
		Labels       map[string]string   `json:"Labels"`
		StopSignal   string              `json:"StopSignal"`
	} `json:"config"`
}

// layerEntry is one entry of the layer archive.
type layerEntry struct {
	Name     string // cleaned, relative to the image's root, no trailing slash
	Type     byte   // tar.TypeDir, tar.TypeReg, ...
	Mode     int64  // permission bits
	UID, GID int
	Size     int64
}

func (e layerEntry) String() string {
	kind := "file"
	switch e.Type {
	case tar.TypeDir:
		kind = "dir"
	case tar.TypeReg:
	default:
		kind = fmt.Sprintf("type %q", e.Type)
	}
	return fmt.Sprintf("/%s %s %04o %d:%d", e.Name, kind, e.Mode, e.UID, e.GID)
}

func (img *ociImage) blob(d ociDescriptor) string {
	alg, hex, _ := strings.Cut(d.Digest, ":")
	return filepath.Join(img.dir, "blobs", alg, hex)
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// readOCI reads the layout at dir: it must hold one image of one layer.
func readOCI(dir string) (*ociImage, error) {
	img := &ociImage{dir: dir}
	var index struct {
		Manifests []ociDescriptor `json:"manifests"`
	}
	if err := readJSON(filepath.Join(dir, "index.json"), &index); err != nil {
		return nil, err
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json names %d manifests, want 1", len(index.Manifests))
	}
	md := index.Manifests[0]
	if err := readJSON(img.blob(md), &img.manifest); err != nil {
		return nil, err
	}
	if err := readJSON(img.blob(img.manifest.Config), &img.config); err != nil {
		return nil, err
	}
	if len(img.manifest.Layers) != 1 {
		return nil, fmt.Errorf("the image has %d layers, want 1 (everything on an empty base)", len(img.manifest.Layers))
	}
	img.size = md.Size + img.manifest.Config.Size
	for _, l := range img.manifest.Layers {
		img.size += l.Size
	}
	err := img.walkLayer(func(e layerEntry, _ io.Reader) error {
		img.entries = append(img.entries, e)
		return nil
	})
	return img, err
}

// walkLayer calls fn for each entry of the layer, with its contents.
func (img *ociImage) walkLayer(fn func(layerEntry, io.Reader) error) error {
	l := img.manifest.Layers[0]
	f, err := os.Open(img.blob(l))
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(l.MediaType, ".tar+gzip"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		r = zr
	case strings.HasSuffix(l.MediaType, ".tar"):
	default:
		return fmt.Errorf("layer media type %q", l.MediaType)
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("layer entry %q leaves the root", h.Name)
		}
		e := layerEntry{Name: name, Type: h.Typeflag, Mode: h.Mode & 0o7777, UID: h.Uid, GID: h.Gid, Size: h.Size}
		if err := fn(e, tr); err != nil {
			return err
		}
	}
}

// unpack extracts the layer into a fresh directory, with the owners and
// modes it records, and returns that directory: the image's root file
// system. Only directories and regular files are expected in this image;
// anything else fails the test.
func unpack(t *testing.T, img *ociImage) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	err := img.walkLayer(func(e layerEntry, r io.Reader) error {
		p := filepath.Join(root, filepath.FromSlash(e.Name))
		switch e.Type {
		case tar.TypeDir:
			if err := os.Mkdir(p, os.FileMode(e.Mode)&os.ModePerm); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(e.Mode)&os.ModePerm)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, r)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("layer entry %s: only directories and regular files are expected", e)
		}
		if err := os.Lchown(p, e.UID, e.GID); err != nil {
			return err
		}
		return os.Chmod(p, os.FileMode(e.Mode)&os.ModePerm)
	})
	if err != nil {
		t.Fatalf("unpack: %v", err)
	}
	return root
}

// entry returns the layer entry at name (relative to the root), if any.
func (img *ociImage) entry(name string) (layerEntry, bool) {
	i := slices.IndexFunc(img.entries, func(e layerEntry) bool { return e.Name == name })
	if i < 0 {
		return layerEntry{}, false
	}
	return img.entries[i], true
}

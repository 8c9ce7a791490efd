package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// maxImageBytes bounds the whole image (manifest, configuration, layer):
// the binary is about 75 MB stripped, the CA bundle about 220 kB. A binary
// that grows past this, or something large added to the image, fails the
// test; raise the bound knowingly.
const maxImageBytes = 100 << 20

// maxLayerOverhead bounds what the layer holds beyond the binary's and the
// CA bundle's bytes: tar headers and padding for nine entries.
const maxLayerOverhead = 64 << 10

// wantEntries is every entry the image holds, and nothing else: the binary,
// the CA bundle, the two directories the image's user owns, and their
// parents.
var wantEntries = []layerEntry{
	{Name: "etc", Type: tar.TypeDir, Mode: 0o755},
	{Name: "etc/fluss-sidecar", Type: tar.TypeDir, Mode: 0o755, UID: imageUID, GID: imageGID},
	{Name: "etc/ssl", Type: tar.TypeDir, Mode: 0o755},
	{Name: "etc/ssl/certs", Type: tar.TypeDir, Mode: 0o755},
	{Name: "etc/ssl/certs/ca-certificates.crt", Type: tar.TypeReg, Mode: 0o644},
	{Name: "fluss-sidecar", Type: tar.TypeReg, Mode: 0o755},
	{Name: "var", Type: tar.TypeDir, Mode: 0o755},
	{Name: "var/lib", Type: tar.TypeDir, Mode: 0o755},
	{Name: "var/lib/fluss-sidecar", Type: tar.TypeDir, Mode: 0o755, UID: imageUID, GID: imageGID},
}

// extractBinary writes the image's /fluss-sidecar to a file, once for the
// package, and returns its path.
func extractBinary(t *testing.T, img *ociImage) string {
	t.Helper()
	p := filepath.Join(buildDir, "image-binary")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	err := img.walkLayer(func(e layerEntry, r io.Reader) error {
		if e.Name != "fluss-sidecar" {
			return nil
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImageHoldsOnlyWhatItNeeds: the layer's exact entries, owners and
// modes; the CA bundle is the host's; the binary is static, built without
// cgo and with -trimpath; the image stays within its size bound.
func TestImageHoldsOnlyWhatItNeeds(t *testing.T) {
	img := builtImage(t)
	got := slices.Clone(img.entries)
	for i := range got {
		got[i].Size = 0
	}
	slices.SortFunc(got, func(a, b layerEntry) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(got, wantEntries) {
		t.Errorf("the image holds:\n%s\nwant exactly:\n%s", entryList(got), entryList(wantEntries))
	}

	host, err := os.ReadFile(hostCABundle)
	if err != nil {
		t.Fatal(err)
	}
	var bundle []byte
	var binSize int64
	err = img.walkLayer(func(e layerEntry, r io.Reader) error {
		switch e.Name {
		case "etc/ssl/certs/ca-certificates.crt":
			b, rerr := io.ReadAll(r)
			bundle = b
			return rerr
		case "fluss-sidecar":
			binSize = e.Size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bundle, host) || !bytes.Contains(bundle, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Errorf("the image's CA bundle (%d bytes) is not the host's %s (%d bytes)", len(bundle), hostCABundle, len(host))
	}

	bin := extractBinary(t, img)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the image's /fluss-sidecar is not an ELF file: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the image's /fluss-sidecar is dynamically linked (program header %v); the image has no libc", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the image's /fluss-sidecar needs shared libraries %v", libs)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/fluss-sidecar/fluss-sidecar/cmd/fluss-sidecar"; bi.Path != want {
		t.Errorf("the image's binary is %s, want %s", bi.Path, want)
	}
	settings := binaryBuildSettings(t, img)
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || settings["GOOS"] != runtime.GOOS || settings["GOARCH"] != runtime.GOARCH {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q GOOS=%q GOARCH=%q, want 0, true, %s, %s",
			settings["CGO_ENABLED"], settings["-trimpath"], settings["GOOS"], settings["GOARCH"], runtime.GOOS, runtime.GOARCH)
	}
	if img.config.OS != runtime.GOOS || img.config.Architecture != runtime.GOARCH {
		t.Errorf("image platform %s/%s, want %s/%s", img.config.OS, img.config.Architecture, runtime.GOOS, runtime.GOARCH)
	}

	t.Logf("image %d bytes: layer %d, binary %d, CA bundle %d", img.size, img.manifest.Layers[0].Size, binSize, len(host))
	if img.size > maxImageBytes {
		t.Errorf("the image is %d bytes, over the bound of %d", img.size, maxImageBytes)
	}
	if over := img.manifest.Layers[0].Size - binSize - int64(len(host)); over > maxLayerOverhead {
		t.Errorf("the layer holds %d bytes beyond the binary and the CA bundle, over %d", over, maxLayerOverhead)
	}
}

func entryList(es []layerEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
)

// startReferenceEmbedded starts the reference setup (see
// startReferenceSidecar) in embedded mode: the same app.Start, the same
// keys, sidecar.embedded: true instead of ZooKeeper and remote storage.
func startReferenceEmbedded(t *testing.T) refSidecar {
	t.Helper()
	c := config.New()
	c.Set("bind.listeners", "FLUSS://127.0.0.1:0")
	c.Set("advertised.listeners", refAdvertised)
	c.Set(app.KeyTabletAdvertised, refTabletAdvertised)
	c.Set(app.KeyEmbedded, "true")
	a := apptest.StartConfig(t, c, app.Options{Now: func() time.Time { return time.UnixMilli(refNowMillis) }})
	return refSidecar{addr: a.Addr(), tablet: a.TabletAddrs()[0].Address()}
}

// TestLiveScenarioGoEmbedded: the vectors' scenario, byte for byte, against
// embedded mode.
func TestLiveScenarioGoEmbedded(t *testing.T) {
	liveScenarioGo(t, startReferenceEmbedded(t))
}

// TestForeignClientsEmbedded: the Python and Java clients pass against
// embedded mode as they do against the ZooKeeper-backed sidecar, every
// deterministic reply compared byte for byte.
func TestForeignClientsEmbedded(t *testing.T) {
	findTools(t)
	foreignClients(t, startReferenceEmbedded(t))
}

// TestCompatEmbeddedScript runs scripts/compat-embedded.sh, what `make
// compat-embedded` and another project's CI run: the fluss-sidecar binary
// started with `serve --embedded --listen 127.0.0.1:0`, its address read
// from its first stdout line, and both clients against it with a real
// clock (replies compared field by field where the clock or address
// shows).
func TestCompatEmbeddedScript(t *testing.T) {
	findTools(t)
	bin := filepath.Join(t.TempDir(), "fluss-sidecar")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/fluss-sidecar")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, "../scripts/compat-embedded.sh")
	cmd.Env = append(os.Environ(), "FLUSS_SIDECAR_BIN="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/compat-embedded.sh:\n%s", out)
	if err != nil {
		t.Fatalf("scripts/compat-embedded.sh: %v", err)
	}
	for _, client := range []string{"python", "java"} {
		if !strings.Contains(string(out), "\nPASS "+client+": all steps") {
			t.Errorf("%s client did not pass every step", client)
		}
	}
	if strings.Contains(string(out), "\nFAIL ") {
		t.Error("a step failed")
	}
}

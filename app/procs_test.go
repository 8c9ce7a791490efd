package app

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestGovernProcsRespectsTheOperator: an operator's GOMAXPROCS, or the key
// turned off, leaves the runtime alone; the first says so at start.
func TestGovernProcsRespectsTheOperator(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})

	t.Setenv("GOMAXPROCS", "2")
	GovernProcs(ctx, Settings{Ops: OpsSettings{AdaptiveProcs: true}}, log)
	if !strings.Contains(buf.String(), "GOMAXPROCS is set") || !strings.Contains(buf.String(), KeyAdaptiveProcs) {
		t.Errorf("start-up log %q does not say GOMAXPROCS is left alone", buf.String())
	}

	buf.Reset()
	t.Setenv("GOMAXPROCS", "")
	GovernProcs(ctx, Settings{Ops: OpsSettings{AdaptiveProcs: false}}, log)
	if buf.Len() != 0 {
		t.Errorf("logged %q with the key off", buf.String())
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d, was %d", got, before)
	}
}

// TestAdaptiveProcsKey: the key defaults to on and reads as a boolean.
func TestAdaptiveProcsKey(t *testing.T) {
	for _, c := range []struct {
		value string
		want  bool
		bad   bool
	}{{"", true, false}, {"false", false, false}, {"true", true, false}, {"sometimes", false, true}} {
		cfg := baseConfig(nil)
		if c.value != "" {
			cfg.Set(KeyAdaptiveProcs, c.value)
		}
		s, err := FromConfig(cfg)
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), KeyAdaptiveProcs) {
				t.Errorf("%q: error %v, want one naming the key", c.value, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if s.Ops.AdaptiveProcs != c.want {
			t.Errorf("%q: AdaptiveProcs %v, want %v", c.value, s.Ops.AdaptiveProcs, c.want)
		}
	}
}

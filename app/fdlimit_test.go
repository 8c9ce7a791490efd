package app_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func known(soft, hard, current uint64) app.FileLimit {
	return app.FileLimit{Known: true, Soft: soft, Hard: hard, Current: current}
}

// TestDeriveMaxConnections: the limit is the open-files limit in force
// (after the raise) minus the reserve, halved in proxy mode; an unknown
// limit keeps wire's default.
func TestDeriveMaxConnections(t *testing.T) {
	cases := []struct {
		name  string
		f     app.FileLimit
		proxy bool
		want  int
	}{
		{"raised from 1024 to 524288", known(1024, 524288, 524288), false, 524288 - 524288/16},
		{"raised, proxy mode", known(1024, 524288, 524288), true, (524288 - 524288/16) / 2},
		{"soft already at hard 65536", known(65536, 65536, 65536), false, 65536 - 4096},
		{"raise failed: the soft limit counts", app.FileLimit{Known: true, Soft: 1024, Hard: 4096, Current: 1024, Err: errors.New("EPERM")}, false, 1024 - 64},
		{"small limit: the fixed reserve", known(1024, 1024, 1024), false, 960},
		{"fixed and fractional reserves meet at 1024", known(1024, 1024, 1024), true, 480},
		{"fraction above the fixed reserve", known(4096, 4096, 4096), false, 4096 - 256},
		{"tiny limit keeps half", known(100, 100, 100), false, 50},
		{"tinier than the reserve", known(4, 4, 4), false, 2},
		{"one descriptor", known(1, 1, 1), false, 1},
		{"one descriptor, proxy", known(1, 1, 1), true, 1},
		{"unlimited is capped", known(math.MaxUint64, math.MaxUint64, math.MaxUint64), false, math.MaxInt32},
		{"unknown platform", app.FileLimit{}, false, wire.DefaultMaxConns},
		{"unknown: getrlimit failed", app.FileLimit{Err: errors.New("ENOSYS")}, true, wire.DefaultMaxConns},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := app.DeriveMaxConnections(tc.f, tc.proxy); got != tc.want {
				t.Fatalf("DeriveMaxConnections(%+v, proxy=%v) = %d, want %d", tc.f, tc.proxy, got, tc.want)
			}
		})
	}
}

// TestMaxConnectionsSetting: an explicit sidecar.max-connections wins over
// the descriptor limit; unset, it is derived (PrepareStart and Start);
// explicit values below 1 are refused at start as before.
func TestMaxConnectionsSetting(t *testing.T) {
	fl := known(1024, 65536, 65536)
	cases := []struct {
		name    string
		value   string // "" leaves the key unset
		proxy   bool
		want    int
		derived bool
		err     string
	}{
		{"unset: derived", "", false, 65536 - 4096, true, ""},
		{"blank: derived", " ", false, 65536 - 4096, true, ""},
		{"unset, proxy: derived and halved", "", true, (65536 - 4096) / 2, true, ""},
		{"explicit wins", "1024", false, 1024, false, ""},
		{"explicit above the descriptor limit wins too", "100000", false, 100000, false, ""},
		{"explicit zero", "0", false, 0, false, "sidecar.max-connections must be at least 1, got 0"},
		{"explicit negative", "-5", false, 0, false, "sidecar.max-connections must be at least 1, got -5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kv := map[string]string{"zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "file:///tmp/x"}
			if tc.value != "" {
				kv[app.KeyMaxConnections] = tc.value
			}
			if tc.proxy {
				kv[app.KeyMode], kv[app.KeyUpstreamAddress] = app.ModeProxy, "127.0.0.1:1"
			}
			c := cfgOf(kv)
			s, err := app.FromConfig(c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("FromConfig: %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := app.EffectiveConfig(c, s)[app.KeyMaxConnections]; tc.derived && !strings.Contains(got, "derived") {
				t.Fatalf("effective %s before start = %q, want it to say it is derived", app.KeyMaxConnections, got)
			}
			s.ApplyFileLimitForTest(fl)
			if s.MaxConnections != tc.want || s.MaxConnectionsDerived != tc.derived {
				t.Fatalf("MaxConnections = %d (derived %v), want %d (derived %v)", s.MaxConnections, s.MaxConnectionsDerived, tc.want, tc.derived)
			}
			var logs syncbuf.Buffer
			app.LogStartup(hclog.New(&hclog.LoggerOptions{Output: &logs}), c, s)
			line := logs.String()
			for _, want := range []string{"open_files=", "65536 (soft limit raised from 1024 to the hard limit)", "max_connections_from="} {
				if !strings.Contains(line, want) {
					t.Fatalf("start-up line lacks %q:\n%s", want, line)
				}
			}
			if eff := app.EffectiveConfig(c, s)[app.KeyMaxConnections]; eff != strconv.Itoa(tc.want) {
				t.Fatalf("effective %s = %q, want %d", app.KeyMaxConnections, eff, tc.want)
			}
		})
	}
}

// TestDefaultMaxConnectionsFollowsDescriptorLimit: a sidecar started
// without sidecar.max-connections serves as many connections per listener
// as its descriptor limit less the reserve, in ZooKeeper mode and in
// embedded mode, and refuses the next one.
func TestDefaultMaxConnectionsFollowsDescriptorLimit(t *testing.T) {
	modes := map[string]func(t *testing.T, opts app.Options) *app.App{
		"zookeeper": func(t *testing.T, opts app.Options) *app.App {
			return apptest.StartConfig(t, apptest.Config(t, sharedZK, nil), opts)
		},
		"embedded": func(t *testing.T, opts app.Options) *app.App {
			return apptest.StartConfig(t, cfgOf(map[string]string{
				"bind.listeners": "FLUSS://127.0.0.1:0", "sidecar.embedded": "true",
			}), opts)
		},
	}
	for name, start := range modes {
		t.Run(name, func(t *testing.T) {
			// A limit of 6 descriptors: the reserve (64) is more than all
			// of them, so half are left for clients: 3.
			var logs syncbuf.Buffer
			calls := 0
			a := start(t, app.Options{
				Logger:    hclog.New(&hclog.LoggerOptions{Output: &logs}),
				FileLimit: func() app.FileLimit { calls++; return known(6, 6, 6) },
			})
			if calls != 1 {
				t.Fatalf("descriptor limit read %d times, want once", calls)
			}
			if got := a.MaxConnections(); got != 3 {
				t.Fatalf("MaxConnections = %d, want 3", got)
			}
			if !strings.Contains(logs.String(), "open_files=") {
				t.Fatalf("Start did not log the open-files limit:\n%s", logs.String())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 3; i++ {
				c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Handshake(ctx); err != nil {
					t.Fatalf("connection %d: %v", i+1, err)
				}
			}
			c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Handshake(ctx); err == nil {
				t.Fatal("the fourth connection was served; want it refused at the derived limit of 3")
			}
		})
	}
}

// TestExplicitMaxConnectionsSkipsDerivation: Start keeps an explicit
// limit whatever the descriptor limit.
func TestExplicitMaxConnectionsSkipsDerivation(t *testing.T) {
	a := apptest.StartConfig(t, cfgOf(map[string]string{
		"bind.listeners": "FLUSS://127.0.0.1:0", "sidecar.embedded": "true", app.KeyMaxConnections: "7",
	}), app.Options{FileLimit: func() app.FileLimit { return known(6, 6, 6) }})
	if got := a.MaxConnections(); got != 7 {
		t.Fatalf("MaxConnections = %d, want the explicit 7", got)
	}
}

package soak

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// series samples f every step over run.
func series(run, step time.Duration, f func(t time.Duration) float64) Series {
	var s Series
	for t := time.Duration(0); t <= run; t += step {
		s = append(s, Point{At: t, Value: f(t)})
	}
	return s
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          Series
		ok         bool
		slope, icp float64
	}{
		{"empty", nil, false, 0, 0},
		{"one point", Series{{0, 5}}, false, 0, 0},
		{"same time", Series{{time.Second, 1}, {time.Second, 3}}, false, 0, 0},
		{"two points", Series{{0, 1}, {2 * time.Second, 5}}, true, 2, 1},
		{"flat", series(time.Minute, time.Second, func(time.Duration) float64 { return 7 }), true, 0, 7},
		{"exact line", series(time.Minute, time.Second, func(t time.Duration) float64 { return 3 - 0.5*t.Seconds() }), true, -0.5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := Fit(tc.s)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if math.Abs(l.Slope-tc.slope) > 1e-9 || math.Abs(l.Intercept-tc.icp) > 1e-9 {
				t.Errorf("slope %g intercept %g, want %g and %g", l.Slope, l.Intercept, tc.slope, tc.icp)
			}
			if l.SlopeErr > 1e-9 {
				t.Errorf("slope error %g on points that lie on the line", l.SlopeErr)
			}
		})
	}
}

// TestFitSlopeErr: the standard error of a noisy line's slope covers the
// true slope, and shrinks as the noise does.
func TestFitSlopeErr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(sd float64) Series {
		return series(10*time.Minute, time.Second, func(t time.Duration) float64 { return 100 + 0.01*t.Seconds() + rng.NormFloat64()*sd })
	}
	big, _ := Fit(noisy(10))
	small, _ := Fit(noisy(1))
	if big.SlopeErr <= small.SlopeErr || small.SlopeErr <= 0 {
		t.Errorf("slope errors %g (noise 10) and %g (noise 1): want the first larger, both above 0", big.SlopeErr, small.SlopeErr)
	}
	if math.Abs(big.Slope-0.01) > 4*big.SlopeErr {
		t.Errorf("slope %g ± %g does not cover 0.01", big.Slope, big.SlopeErr)
	}
}

func TestSecondHalf(t *testing.T) {
	s := series(10*time.Second, time.Second, func(t time.Duration) float64 { return t.Seconds() })
	h := SecondHalf(s, 10*time.Second)
	if len(h) != 6 || h[0].At != 5*time.Second {
		t.Fatalf("second half %v", h)
	}
	if got := SecondHalf(nil, time.Minute); len(got) != 0 {
		t.Errorf("second half of nothing: %v", got)
	}
}

// TestJudge: the verdict on synthetic runs of 30 minutes sampled every 5
// seconds, the rules the soak uses for memory.
func TestJudge(t *testing.T) {
	const run = 30 * time.Minute
	const step = 5 * time.Second
	rng := rand.New(rand.NewPCG(3, 4))
	rss := Rule{Quantity: "rss", Unit: "B", Allowed: 8 * mib, ExplainedBy: []Explainer{{"cache", 3}}}
	level := func(v float64) func(time.Duration) float64 { return func(time.Duration) float64 { return v } }
	perTenMin := func(base, per10 float64) func(time.Duration) float64 {
		return func(t time.Duration) float64 { return base + per10*t.Minutes()/10 }
	}
	noise := func(f func(time.Duration) float64, sd float64) func(time.Duration) float64 {
		return func(t time.Duration) float64 { return f(t) + rng.NormFloat64()*sd }
	}
	// warm grows fast in the first minutes, then stays: start-up is not
	// growth.
	warm := func(t time.Duration) float64 { return 40*mib - 20*mib*math.Exp(-t.Minutes()/2) }
	// sawtooth is a garbage-collected heap: up 6 MiB over 40 s, then back.
	sawtooth := func(t time.Duration) float64 {
		return 30*mib + 6*mib*math.Mod(t.Seconds(), 40)/40
	}
	for _, tc := range []struct {
		name  string
		rss   func(time.Duration) float64
		cache func(time.Duration) float64
		pass  bool
	}{
		{"level", level(50 * mib), level(mib), true},
		{"noisy flat", noise(level(50*mib), 3*mib), level(mib), true},
		{"sawtooth heap", sawtooth, level(mib), true},
		{"warm-up then level", noise(warm, mib), level(mib), true},
		{"the outside run's leak, 15 MiB per 10 min", noise(perTenMin(50*mib, 15*mib), 2*mib), level(mib), false},
		{"a slow leak, 4 MiB per 10 min", perTenMin(50*mib, 4*mib), level(mib), false},
		{"a slow leak under noise", noise(perTenMin(50*mib, 4*mib), mib), level(mib), false},
		{"growth within the allowance", perTenMin(50*mib, mib), level(mib), true},
		{"growth the live data explains", noise(perTenMin(50*mib, 15*mib), mib), perTenMin(mib, 5*mib), true},
		{"growth beyond what the live data explains", noise(perTenMin(50*mib, 30*mib), mib), perTenMin(mib, 5*mib), false},
		{"shrinking live data explains nothing", noise(perTenMin(50*mib, 15*mib), mib), perTenMin(20*mib, -5*mib), false},
		{"shrinking", perTenMin(80*mib, -10*mib), level(mib), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]Series{"rss": series(run, step, tc.rss), "cache": series(run, step, tc.cache)}
			vs := Judge(run, in, []Rule{rss})
			if len(vs) != 1 {
				t.Fatalf("%d verdicts", len(vs))
			}
			v := vs[0]
			if v.Pass != tc.pass {
				t.Errorf("pass %v, want %v: %s\n%s", v.Pass, tc.pass, v.Reason, Format("rss", vs, true))
			}
			if !v.Pass && !strings.Contains(v.Reason, "MiB per 10 min") {
				t.Errorf("a failure without its figures: %q", v.Reason)
			}
		})
	}
}

// TestJudgeLegitimateExplainers: memory that grows with a cache that grows
// without cause is not explained by it; with the same cache judged level
// (its growth explained by the live data), it is.
func TestJudgeLegitimateExplainers(t *testing.T) {
	const run = 30 * time.Minute
	line := func(base, per10 float64) Series {
		return series(run, 5*time.Second, func(t time.Duration) float64 { return base + per10*t.Minutes()/10 })
	}
	cacheRule := Rule{Quantity: "cache", Unit: "B", Allowed: 64 << 10, ExplainedBy: []Explainer{{"live", 1 << 10}}}
	rssRule := Rule{Quantity: "rss", Unit: "B", Allowed: 8 * mib, ExplainedBy: []Explainer{{"cache", 3}}}
	for _, tc := range []struct {
		name                string
		live                Series
		cachePass, rssPass  bool
		rssExplainedAtLeast float64
	}{
		{"the cache grows and the live data does not", line(100, 0), false, false, 0},
		{"the cache grows with the live data", line(100, 6000), true, true, 40 * mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]Series{"live": tc.live, "cache": line(mib, 5*mib), "rss": line(50*mib, 15*mib)}
			vs := Judge(run, in, []Rule{cacheRule, rssRule})
			if vs[0].Pass != tc.cachePass || vs[1].Pass != tc.rssPass || vs[1].Explained < tc.rssExplainedAtLeast {
				t.Errorf("cache pass %v, rss pass %v (explained %.1f MiB); want %v, %v, at least %.1f MiB\n%s",
					vs[0].Pass, vs[1].Pass, vs[1].Explained/mib, tc.cachePass, tc.rssPass, tc.rssExplainedAtLeast/mib, Format("t", vs, true))
			}
		})
	}
}

// TestJudgeRelativeAllowance: AllowedFrac scales with the level, so 20
// goroutines more on 600 pass and 200 more do not.
func TestJudgeRelativeAllowance(t *testing.T) {
	const run = 10 * time.Minute
	rule := Rule{Quantity: "goroutines", Allowed: 10, AllowedFrac: 0.05}
	for _, tc := range []struct {
		grow float64
		pass bool
	}{{20, true}, {200, false}} {
		s := series(run, 5*time.Second, func(t time.Duration) float64 { return 600 + tc.grow*t.Seconds()/run.Seconds() })
		v := Judge(run, map[string]Series{"goroutines": s}, []Rule{rule})[0]
		if v.Pass != tc.pass {
			t.Errorf("growth %g on 600: pass %v, want %v (allowed %g)", tc.grow, v.Pass, tc.pass, v.Allowed)
		}
	}
}

// TestJudgeTooFewSamples: a quantity that was not sampled fails, saying so.
func TestJudgeTooFewSamples(t *testing.T) {
	const run = 10 * time.Minute
	for _, tc := range []struct {
		name string
		s    Series
	}{
		{"missing", nil},
		{"first half only", series(run/3, 5*time.Second, func(time.Duration) float64 { return 1 })},
		{"three in the second half", Series{{6 * time.Minute, 1}, {7 * time.Minute, 1}, {8 * time.Minute, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(run, map[string]Series{"q": tc.s}, []Rule{{Quantity: "q", Allowed: 1e9}})[0]
			if v.Pass || v.Fitted || !strings.Contains(v.Reason, "samples in the second half") {
				t.Errorf("pass %v fitted %v reason %q", v.Pass, v.Fitted, v.Reason)
			}
			if out := Format("t", []Verdict{v}, true); !strings.Contains(out, "no verdict") {
				t.Errorf("table:\n%s", out)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	const run = 10 * time.Minute
	in := map[string]Series{
		"rss":        series(run, 5*time.Second, func(t time.Duration) float64 { return 40*mib + 10*mib*t.Minutes()/10 }),
		"goroutines": series(run, 5*time.Second, func(time.Duration) float64 { return 12 }),
	}
	vs := Judge(run, in, []Rule{{Quantity: "rss", Unit: "B", Allowed: mib}, {Quantity: "goroutines", Allowed: 5}})
	out := Format("sidecar A", vs, true)
	for _, want := range []string{"sidecar A\n", "rss (MiB)", "40.00", "50.00", "10.00", "GROWS", "goroutines", "12.0", "level"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if out := Format("short", vs, false); strings.Contains(out, "GROWS") || strings.Contains(out, "level") {
		t.Errorf("an unjudged table with verdicts:\n%s", out)
	}
}

package soak

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Point is one sample of a quantity: when, since the run started, and its
// value.
type Point struct {
	At    time.Duration
	Value float64
}

// Series is a quantity's samples in the order they were taken.
type Series []Point

// Line is a least-squares line through a series: Value = Intercept +
// Slope*seconds. SlopeErr is the slope's standard error; it is 0 when the
// points lie on the line or there are only two.
type Line struct {
	Slope, Intercept, SlopeErr float64
	N                          int
}

// Fit returns the least-squares line through s. ok is false when fewer
// than two points have distinct times.
func Fit(s Series) (l Line, ok bool) {
	n := float64(len(s))
	if len(s) < 2 {
		return Line{N: len(s)}, false
	}
	var mx, my float64
	for _, p := range s {
		mx += p.At.Seconds()
		my += p.Value
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for _, p := range s {
		dx := p.At.Seconds() - mx
		sxx += dx * dx
		sxy += dx * (p.Value - my)
	}
	if sxx == 0 {
		return Line{N: len(s)}, false
	}
	l = Line{Slope: sxy / sxx, N: len(s)}
	l.Intercept = my - l.Slope*mx
	if len(s) > 2 {
		var rss float64
		for _, p := range s {
			r := p.Value - (l.Intercept + l.Slope*p.At.Seconds())
			rss += r * r
		}
		l.SlopeErr = math.Sqrt(rss / (n - 2) / sxx)
	}
	return l, true
}

// SecondHalf is the part of s from half of the run on: what the verdict
// looks at, once start-up, warm caches and the first connections' buffers
// are behind.
func SecondHalf(s Series, run time.Duration) Series {
	i, _ := slices.BinarySearchFunc(s, run/2, func(p Point, t time.Duration) int {
		return cmp.Compare(p.At, t)
	})
	return s[i:]
}

// Rule says how much one quantity may grow over a run.
type Rule struct {
	// Quantity names the series the rule judges.
	Quantity string
	// Unit is how Format prints values: "B" as MiB, anything else as is.
	Unit string
	// Allowed is the growth over the run that needs no explanation (steps
	// of the allocator, a goroutine more or less), and AllowedFrac a
	// fraction of the quantity's mean level added to it.
	Allowed, AllowedFrac float64
	// ExplainedBy are the quantities whose growth explains this one's.
	ExplainedBy []Explainer
}

// Explainer is a quantity whose growth explains another's: each unit more
// of Quantity explains PerUnit more of the judged quantity.
type Explainer struct {
	Quantity string
	PerUnit  float64
}

// minPoints is how many second-half samples a verdict needs.
const minPoints = 8

// Verdict is what Judge found for one rule.
type Verdict struct {
	Rule Rule
	// Start and End are the first and last samples of the whole run.
	Start, End float64
	// Per10Min is the second half's slope, per ten minutes.
	Per10Min float64
	// Growth is the slope times the run's length: what the run would have
	// grown at the rate its second half shows; GrowthLow is the same for
	// the slope less two standard errors, what the samples show for sure.
	Growth, GrowthLow float64
	// Explained is the growth the explainers' own growth accounts for
	// (never below 0), Allowed the rule's allowance at the quantity's
	// level.
	Explained, Allowed float64
	// Fitted is false when there were too few samples for a line.
	Fitted bool
	// Pass is false when GrowthLow exceeds Explained plus Allowed, or
	// nothing was fitted; Reason then says why.
	Pass   bool
	Reason string
}

// Judge fits each rule's quantity over the second half of a run of length
// run and passes it when its growth over the run, at the rate the second
// half shows less two standard errors, stays within what its explainers'
// growth explains plus its allowance. A quantity with too few samples
// fails: a run that could not sample proves nothing.
//
// Only explained growth explains: an explainer judged earlier in rules
// passes on at most the growth its own explainers accounted for, not its
// allowance (noise does not add up along a chain), so a cache that grows
// without cause fails, and so does the memory that grows with it. An
// explainer without a rule passes on all of its fitted growth.
func Judge(run time.Duration, series map[string]Series, rules []Rule) []Verdict {
	out := make([]Verdict, 0, len(rules))
	legit := map[string]float64{} // the explained growth of each quantity judged so far
	for _, r := range rules {
		v := Verdict{Rule: r}
		s := series[r.Quantity]
		if len(s) > 0 {
			v.Start, v.End = s[0].Value, s[len(s)-1].Value
		}
		half := SecondHalf(s, run)
		l, ok := Fit(half)
		if !ok || len(half) < minPoints {
			v.Reason = fmt.Sprintf("%s: %d samples in the second half, need %d", r.Quantity, len(half), minPoints)
			legit[r.Quantity] = 0
			out = append(out, v)
			continue
		}
		v.Fitted = true
		secs := run.Seconds()
		v.Per10Min = l.Slope * 600
		v.Growth = l.Slope * secs
		v.GrowthLow = (l.Slope - 2*l.SlopeErr) * secs
		for _, e := range r.ExplainedBy {
			el, ok := Fit(SecondHalf(series[e.Quantity], run))
			if !ok {
				continue
			}
			g := el.Slope * secs
			if lg, judged := legit[e.Quantity]; judged {
				g = min(g, lg)
			}
			v.Explained += g * e.PerUnit
		}
		v.Explained = max(v.Explained, 0)
		v.Allowed = r.Allowed + r.AllowedFrac*math.Abs(mean(half))
		v.Pass = v.GrowthLow <= v.Explained+v.Allowed
		legit[r.Quantity] = v.Explained
		if !v.Pass {
			v.Reason = fmt.Sprintf("%s grows %s over the run (at least %s; %s per 10 min), more than the %s its explainers' growth accounts for plus the %s allowed",
				r.Quantity, v.format(v.Growth), v.format(v.GrowthLow), v.format(v.Per10Min), v.format(v.Explained), v.format(v.Allowed))
		}
		out = append(out, v)
	}
	return out
}

func mean(s Series) float64 {
	var m float64
	for _, p := range s {
		m += p.Value
	}
	return m / float64(len(s))
}

func (v Verdict) format(x float64) string {
	if v.Rule.Unit == "B" {
		return fmt.Sprintf("%.2f MiB", x/(1<<20))
	}
	return fmt.Sprintf("%.1f", x)
}

// Format prints verdicts as a table: start, end, slope per 10 minutes,
// growth over the run, explained, allowed and the verdict. judged false
// leaves the verdict column out (a short run, whose slopes prove nothing).
func Format(title string, vs []Verdict, judged bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	fmt.Fprintf(&b, "%-22s %12s %12s %12s %12s %12s %12s", "quantity", "start", "end", "per 10 min", "growth", "explained", "allowed")
	if judged {
		b.WriteString("  verdict")
	}
	b.WriteString("\n")
	for _, v := range vs {
		name := v.Rule.Quantity
		if v.Rule.Unit == "B" {
			name += " (MiB)"
		}
		f := func(x float64) string {
			if v.Rule.Unit == "B" {
				return fmt.Sprintf("%.2f", x/(1<<20))
			}
			return fmt.Sprintf("%.1f", x)
		}
		slope, growth, explained, allowed := f(v.Per10Min), f(v.Growth), f(v.Explained), f(v.Allowed)
		if !v.Fitted {
			slope, growth, explained, allowed = "-", "-", "-", "-"
		}
		fmt.Fprintf(&b, "%-22s %12s %12s %12s %12s %12s %12s", name, f(v.Start), f(v.End), slope, growth, explained, allowed)
		if judged {
			switch {
			case v.Pass:
				b.WriteString("  level")
			case !v.Fitted:
				b.WriteString("  no verdict: " + v.Reason)
			default:
				b.WriteString("  GROWS")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

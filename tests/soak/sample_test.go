package soak

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	gozk "github.com/go-zookeeper/zk"
)

// sampler takes the samples of a run: every quantity of each sidecar, and
// the stores' own counts, into samples.csv (one row per sidecar and
// sample) and into series for the verdict.
type sampler struct {
	path      string
	sides     []*sidecarProc
	zk        *gozk.Conn
	root, dir string
	start     time.Time

	f    *os.File
	w    *csv.Writer
	cols []string
	// series holds each sidecar's quantities, by sidecar index; the
	// stores' counts go with the first sidecar's, the one judged.
	series []map[string]Series
	// errs are the samples of the first sidecar or the stores that
	// failed (the other sidecar cannot be read while it restarts).
	errs []string
}

// columns of samples.csv after elapsed_s, sidecar and pid.
func columns() []string {
	var cols []string
	for _, q := range metricQuantities {
		cols = append(cols, q.name)
	}
	cols = append(cols, procQuantities...)
	return append(cols, liveQuantities...)
}

func newSampler(path string, sides []*sidecarProc, zk *gozk.Conn, root, dir string) (*sampler, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s := &sampler{path: path, sides: sides, zk: zk, root: root, dir: dir, start: time.Now(), f: f, w: csv.NewWriter(f), cols: columns()}
	for range sides {
		s.series = append(s.series, map[string]Series{})
	}
	s.w.Write(append([]string{"elapsed_s", "sidecar", "pid"}, s.cols...))
	return s, nil
}

// sample takes one sample of everything, now.
func (s *sampler) sample() {
	at := time.Since(s.start)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := liveData(s.zk, s.root, s.dir)
	if err != nil {
		s.errs = append(s.errs, err.Error())
	}
	for name, v := range store {
		s.series[0][name] = append(s.series[0][name], Point{at, v})
	}
	for i, sc := range s.sides {
		pid := sc.PID()
		if pid == 0 {
			continue // between a stop and a start
		}
		vals, err := scrape(ctx, sc.metricsPort)
		var proc map[string]float64
		if err == nil {
			proc, err = procStats(pid)
		}
		if err != nil {
			if i == 0 {
				s.errs = append(s.errs, fmt.Sprintf("%s: %v", sc.name, err))
			}
			continue
		}
		row := []string{strconv.FormatFloat(at.Seconds(), 'f', 1, 64), sc.name, strconv.Itoa(pid)}
		for _, c := range s.cols {
			v, ok := vals[c]
			if !ok {
				v, ok = proc[c]
			}
			if !ok {
				v, ok = store[c]
			}
			if !ok {
				row = append(row, "") // a metric this binary does not export
				continue
			}
			row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
			if !slices.Contains(liveQuantities, c) {
				s.series[i][c] = append(s.series[i][c], Point{at, v})
			}
		}
		s.w.Write(row)
	}
	s.w.Flush()
}

func (s *sampler) close() error {
	s.w.Flush()
	err := s.w.Error()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// restarts is what rollingRestart did.
type restarts struct {
	done    int
	unclean []string        // one line per stop or start that went wrong
	stops   []time.Duration // SIGTERM to exit
	starts  []time.Duration // exec to /readyz 200
}

// rollingRestart stops p with SIGTERM every period, waits for its exit
// (status 0 expected) and starts it again, until ctx ends.
func rollingRestart(ctx context.Context, p *sidecarProc, every time.Duration) restarts {
	var rs restarts
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return rs
		case <-tick.C:
		}
		t0 := time.Now()
		code, err := p.Stop(2 * time.Minute)
		rs.stops = append(rs.stops, time.Since(t0))
		if err != nil || code != 0 {
			rs.unclean = append(rs.unclean, fmt.Sprintf("stop %d: exit status %d, %v", rs.done+1, code, err))
		}
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		t0 = time.Now()
		err = p.Start(sctx)
		cancel()
		rs.starts = append(rs.starts, time.Since(t0))
		if err != nil {
			rs.unclean = append(rs.unclean, fmt.Sprintf("start %d: %v", rs.done+1, err))
			continue
		}
		rs.done++
	}
}

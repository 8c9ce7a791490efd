package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// loadShape is how much of each kind of load a run drives, summed over
// the two sidecars (each kind is split between them).
type loadShape struct {
	// getConns connections each send a GET getHz times a second, of a
	// static snapshot (registered once, never deleted), of an id never
	// registered, or of a job's id.
	getConns int
	getHz    float64
	// jobWorkers each cycle through idsPerWorker ids of their own:
	// register on one sidecar, read it on both, delete it on the other,
	// read its absence on both.
	jobWorkers, idsPerWorker int
	// staticIDs are registered at the start and read by the GET storm;
	// absentIDs are read and never registered.
	staticIDs, absentIDs int
	// churnPerSec connections a second are opened, handshaken, used for
	// one GET and closed.
	churnPerSec int
	// badEvery is how often a burst of bad input is sent.
	badEvery time.Duration
}

// The timeout of every call a load client makes: an answer later than this
// counts as none.
const callTimeout = 15 * time.Second

// tally counts, for one sidecar, what its clients saw.
type tally struct {
	answered atomic.Int64 // success answers
	errors   atomic.Int64 // error answers (a Fluss code), bad input's excluded
	lost     atomic.Int64 // calls without an answer: timeout or lost connection
	timeouts atomic.Int64 // those of them that timed out
	noDial   atomic.Int64 // connections that could not be opened or handshaken
	badOK    atomic.Int64 // bad inputs answered with the error they deserve
	codes    sync.Map     // flusserr.Code -> *atomic.Int64, of errors
}

func (t *tally) code(c flusserr.Code) {
	v, _ := t.codes.LoadOrStore(c, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (t *tally) String() string {
	s := fmt.Sprintf("answered %d, error answers %d, unanswered %d (%d timed out, the rest lost with their connection), failed dials %d, bad inputs refused %d",
		t.answered.Load(), t.errors.Load(), t.lost.Load(), t.timeouts.Load(), t.noDial.Load(), t.badOK.Load())
	var codes []string
	t.codes.Range(func(k, v any) bool {
		codes = append(codes, fmt.Sprintf("%d×%d", k.(flusserr.Code), v.(*atomic.Int64).Load()))
		return true
	})
	if len(codes) > 0 {
		slices.Sort(codes)
		s += " (codes " + strings.Join(codes, " ") + ")"
	}
	return s
}

// violations collects what must never happen: a snapshot lost or stale,
// bad input accepted, a wrong answer. It keeps the first maxViolations.
type violations struct {
	mu   sync.Mutex
	n    int
	list []string
}

const maxViolations = 50

func (v *violations) add(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.n++
	if len(v.list) < maxViolations {
		v.list = append(v.list, fmt.Sprintf(format, args...))
	}
}

func (v *violations) String() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d violations, the first %d:\n  %s", v.n, len(v.list), strings.Join(v.list, "\n  "))
}

// load drives a shape against the sidecars and checks every answer.
type load struct {
	shape   loadShape
	sides   []*sidecarProc
	tallies []*tally
	bad     violations
	ttl     time.Duration

	static, absent, jobs []string
	snaps                atomic.Int64 // unique snapshot numbers

	cycles   atomic.Int64 // job cycles completed
	verified atomic.Int64 // reads of a job's acknowledged snapshot or absence, checked
	late     atomic.Int64 // snapshots of a register whose answer was lost, seen later
}

func newLoad(shape loadShape, sides []*sidecarProc, ttl time.Duration) *load {
	l := &load{shape: shape, sides: sides, ttl: ttl}
	for range sides {
		l.tallies = append(l.tallies, &tally{})
	}
	for i := range shape.staticIDs {
		l.static = append(l.static, fmt.Sprintf("soak-static-%d", i))
	}
	for i := range shape.absentIDs {
		l.absent = append(l.absent, fmt.Sprintf("soak-never-%d", i))
	}
	for i := range shape.jobWorkers * shape.idsPerWorker {
		l.jobs = append(l.jobs, fmt.Sprintf("soak-job-%d", i))
	}
	return l
}

// snapshot is the request offsets of snapshot number n: two tables, one
// partitioned, each bucket's offset derived from n, so that every
// register's snapshot differs from every other's.
func snapshot(n int64) []*messages.PbProducerTableOffsets {
	var t1 []*messages.PbBucketOffset
	for b := range int32(4) {
		t1 = append(t1, &messages.PbBucketOffset{BucketId: proto.Int32(b), LogEndOffset: proto.Int64(n*10 + int64(b))})
	}
	return []*messages.PbProducerTableOffsets{
		{TableId: proto.Int64(1), BucketOffsets: t1},
		{TableId: proto.Int64(2), BucketOffsets: []*messages.PbBucketOffset{
			{PartitionId: proto.Int64(5), BucketId: proto.Int32(0), LogEndOffset: proto.Int64(n)},
		}},
	}
}

// canonical writes table offsets in one order, to compare an answer with
// what was registered.
func canonical(ts []*messages.PbProducerTableOffsets) string {
	var parts []string
	for _, t := range ts {
		for _, b := range t.BucketOffsets {
			p := int64(-1)
			if b.PartitionId != nil {
				p = b.GetPartitionId()
			}
			parts = append(parts, fmt.Sprintf("%d/%d/%d=%d", t.GetTableId(), p, b.GetBucketId(), b.GetLogEndOffset()))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// Absent is what canonical answers for no snapshot.
const absentSnap = ""

// conn is one load client's connection to one sidecar, dialled on demand.
type conn struct {
	side int
	c    *wire.Client
}

func (l *load) dial(side int) (*wire.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, l.sides[side].addr, wire.ClientOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// up makes sure cn is connected; false (counted) when it cannot be.
func (l *load) up(cn *conn) bool {
	if cn.c != nil {
		select {
		case <-cn.c.Done():
			cn.c.Close()
			cn.c = nil
		default:
			return true
		}
	}
	c, err := l.dial(cn.side)
	if err != nil {
		l.tallies[cn.side].noDial.Add(1)
		return false
	}
	cn.c = c
	return true
}

func (cn *conn) close() {
	if cn.c != nil {
		cn.c.Close()
		cn.c = nil
	}
}

// outcome of one call.
type outcome int

const (
	answered outcome = iota // a success answer
	refused                 // an error answer with a Fluss code
	unknown                 // no answer: timeout, lost connection, not sent
)

// call makes one call on cn and counts it; a call without an answer
// closes the connection, so a late answer is not taken for the next one's.
func (l *load) call(cn *conn, key messages.Key, req, resp proto.Message) (outcome, flusserr.Code) {
	if !l.up(cn) {
		return unknown, 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	err := cn.c.Call(ctx, key, 0, req, resp)
	t := l.tallies[cn.side]
	if err == nil {
		t.answered.Add(1)
		return answered, 0
	}
	if fe, ok := flusserr.From(err); ok {
		t.errors.Add(1)
		t.code(fe.Code)
		return refused, fe.Code
	}
	t.lost.Add(1)
	if errors.Is(err, context.DeadlineExceeded) {
		t.timeouts.Add(1)
	}
	cn.close()
	return unknown, 0
}

func (l *load) get(cn *conn, id string) (outcome, string) {
	resp := &messages.GetProducerOffsetsResponse{}
	o, _ := l.call(cn, messages.KeyGetProducerOffsets, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp)
	if o != answered || resp.ProducerId == nil {
		return o, absentSnap
	}
	if resp.GetProducerId() != id {
		l.bad.add("GET %s on %s answered producer id %q", id, l.sides[cn.side].name, resp.GetProducerId())
	}
	return o, canonical(resp.TableOffsets)
}

// register returns the outcome and whether it was CREATED.
func (l *load) register(cn *conn, id string, n int64) (outcome, bool) {
	resp := &messages.RegisterProducerOffsetsResponse{}
	o, _ := l.call(cn, messages.KeyRegisterProducerOffsets, &messages.RegisterProducerOffsetsRequest{
		ProducerId:   proto.String(id),
		TableOffsets: snapshot(n),
		TtlMs:        proto.Int64(l.ttl.Milliseconds()),
	}, resp)
	return o, o == answered && resp.GetResult() == 0
}

func (l *load) del(cn *conn, id string) outcome {
	o, _ := l.call(cn, messages.KeyDeleteProducerOffsets, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, nil)
	return o
}

// setup registers every static snapshot (on the first sidecar) and
// deletes whatever a job id holds.
func (l *load) setup() error {
	cn := &conn{side: 0}
	defer cn.close()
	for i, id := range l.static {
		o, created := l.register(cn, id, staticSnap(i))
		if o != answered || !created {
			return fmt.Errorf("register %s: outcome %d, created %v", id, o, created)
		}
	}
	return nil
}

// staticSnap numbers the static snapshots far above every job's (which
// count up from 1; offsets must not be negative).
func staticSnap(i int) int64 { return 1<<40 + int64(i) }

// run drives every kind of load until ctx ends and returns when every
// client has stopped.
func (l *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	goN := func(n int, f func(i int)) {
		for i := range n {
			wg.Go(func() { f(i) })
		}
	}
	goN(l.shape.getConns, func(i int) { l.storm(ctx, i) })
	goN(l.shape.jobWorkers, func(i int) { l.job(ctx, i) })
	wg.Go(func() { l.churn(ctx) })
	wg.Go(func() { l.badInput(ctx) })
	wg.Wait()
}

// every runs f at rate hz, from a random phase, until ctx ends.
func every(ctx context.Context, rng *rand.Rand, hz float64, f func()) {
	period := time.Duration(float64(time.Second) / hz)
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(rng.Int64N(int64(period)))):
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

// storm is one GET storm connection: static snapshots must read back as
// registered, never-registered ids as absent.
func (l *load) storm(ctx context.Context, i int) {
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	cn := &conn{side: i % len(l.sides)}
	defer cn.close()
	every(ctx, rng, l.shape.getHz, func() {
		switch r := rng.IntN(10); {
		case r < 5:
			k := rng.IntN(len(l.static))
			if o, got := l.get(cn, l.static[k]); o == answered && got != canonical(snapshot(staticSnap(k))) {
				l.bad.add("GET %s on %s: %q, want its static snapshot", l.static[k], l.sides[cn.side].name, got)
			}
		case r < 8:
			id := l.absent[rng.IntN(len(l.absent))]
			if o, got := l.get(cn, id); o == answered && got != absentSnap {
				l.bad.add("GET %s on %s: %q, an id never registered", id, l.sides[cn.side].name, got)
			}
		default:
			l.get(cn, l.jobs[rng.IntN(len(l.jobs))])
		}
	})
}

// jobState is what a job worker knows of one of its ids: the snapshot its
// last acknowledged register stored (absentSnap after an acknowledged
// delete), and the snapshots of registers whose outcome it never learned,
// which may appear later (a write settles after its answer was lost).
type jobState struct {
	acked   string
	unknown map[string]bool
}

// job is one job worker: register on one sidecar, read on both, delete on
// the other, read the absence on both, over its own ids only, so that
// every answer can be checked exactly.
func (l *load) job(ctx context.Context, w int) {
	k := l.shape.idsPerWorker
	ids := l.jobs[w*k : (w+1)*k]
	state := make([]jobState, k)
	for i := range state {
		state[i].unknown = map[string]bool{}
	}
	conns := make([]*conn, len(l.sides))
	for s := range conns {
		conns[s] = &conn{side: s}
		defer conns[s].close()
	}
	rng := rand.New(rand.NewPCG(uint64(w), 2))
	pause := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Duration(20+rng.IntN(60)) * time.Millisecond):
			return true
		}
	}
	// check reads id on every sidecar and compares with what st allows.
	check := func(id string, st *jobState) {
		for _, cn := range conns {
			o, got := l.get(cn, id)
			switch {
			case o != answered:
			case got == st.acked:
				l.verified.Add(1)
			case st.unknown[got]:
				l.late.Add(1)
			case st.acked == absentSnap:
				l.bad.add("GET %s on %s found %q after its delete was acknowledged", id, l.sides[cn.side].name, got)
			case got == absentSnap:
				l.bad.add("GET %s on %s: absent, but its register was acknowledged CREATED (%q) and not deleted", id, l.sides[cn.side].name, st.acked)
			default:
				l.bad.add("GET %s on %s: %q, want %q", id, l.sides[cn.side].name, got, st.acked)
			}
		}
	}
	// settle deletes id until a delete is acknowledged (or ctx ends).
	settle := func(id string, st *jobState, via int) bool {
		for ctx.Err() == nil {
			if l.del(conns[via], id) == answered {
				st.acked = absentSnap
				return true
			}
			via = (via + 1) % len(conns)
			pause()
		}
		return false
	}
	for cycle := 0; ctx.Err() == nil; cycle++ {
		i := cycle % k
		id, st := ids[i], &state[i]
		writer := (cycle / k) % len(conns)
		reader := (writer + 1) % len(conns)
		n := l.snaps.Add(1)
		o, created := l.register(conns[writer], id, n)
		switch {
		case o == answered && created:
			st.acked = canonical(snapshot(n))
		case o == answered:
			// ALREADY_EXISTS: only a register whose answer was lost
			// can have left a snapshot behind.
			if len(st.unknown) == 0 {
				l.bad.add("REGISTER %s on %s: ALREADY_EXISTS after its delete was acknowledged", id, l.sides[writer].name)
			}
			settle(id, st, writer)
			continue
		default:
			// An error answer or none: the outcome is unknown (a
			// REQUEST_TIME_OUT may still settle); remember the
			// snapshot and delete it.
			st.unknown[canonical(snapshot(n))] = true
			settle(id, st, reader)
			continue
		}
		for range 2 {
			if !pause() {
				return
			}
			check(id, st)
		}
		if !settle(id, st, reader) {
			return
		}
		check(id, st)
		l.cycles.Add(1)
		if !pause() {
			return
		}
	}
}

// churn opens churnPerSec connections a second, alternating sidecars:
// handshake, one GET of a static snapshot, close.
func (l *load) churn(ctx context.Context) {
	rng := rand.New(rand.NewPCG(3, 3))
	var wg sync.WaitGroup
	defer wg.Wait()
	var n atomic.Int64
	every(ctx, rng, float64(l.shape.churnPerSec), func() {
		wg.Go(func() {
			cn := &conn{side: int(n.Add(1)) % len(l.sides)}
			defer cn.close()
			k := int(n.Load()) % len(l.static)
			if o, got := l.get(cn, l.static[k]); o == answered && got != canonical(snapshot(staticSnap(k))) {
				l.bad.add("GET %s on a new connection to %s: %q", l.static[k], l.sides[cn.side].name, got)
			}
		})
	})
}

// badInputs are requests that must be refused with a Fluss error, each
// with the code a Fluss server gives it.
var badInputs = []struct {
	name string
	key  messages.Key
	body func() []byte
	code flusserr.Code
}{
	{"GET of an invalid producer id", messages.KeyGetProducerOffsets, func() []byte {
		b, _ := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("soak bad/id")})
		return b
	}, flusserr.InvalidProducerID},
	{"REGISTER of an invalid producer id", messages.KeyRegisterProducerOffsets, func() []byte {
		b, _ := proto.Marshal(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("soak bad/id"), TableOffsets: snapshot(1), TtlMs: proto.Int64(60000)})
		return b
	}, flusserr.InvalidProducerID},
	{"REGISTER of a producer id of 300 characters", messages.KeyRegisterProducerOffsets, func() []byte {
		b, _ := proto.Marshal(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(strings.Repeat("x", 300)), TableOffsets: snapshot(1), TtlMs: proto.Int64(60000)})
		return b
	}, flusserr.InvalidProducerID},
	{"DELETE of an empty producer id", messages.KeyDeleteProducerOffsets, func() []byte {
		b, _ := proto.Marshal(&messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("")})
		return b
	}, flusserr.InvalidProducerID},
	{"GET whose body is not protobuf", messages.KeyGetProducerOffsets, func() []byte { return []byte{0xff, 0xff, 0xff, 0xff} }, flusserr.CorruptMessage},
	{"REGISTER without its required fields", messages.KeyRegisterProducerOffsets, func() []byte { return nil }, flusserr.CorruptMessage},
}

// badInput sends, every badEvery, each bad request on one connection to
// one sidecar (alternating), then a frame with a negative length, which
// must be answered with a server failure and the connection closed.
func (l *load) badInput(ctx context.Context) {
	rng := rand.New(rand.NewPCG(4, 4))
	side := 0
	every(ctx, rng, 1/l.shape.badEvery.Seconds(), func() {
		side = (side + 1) % len(l.sides)
		c, err := l.dial(side)
		if err != nil {
			l.tallies[side].noDial.Add(1)
			return
		}
		defer c.Close()
		name := l.sides[side].name
		t := l.tallies[side]
		for _, b := range badInputs {
			cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			r, err := c.CallRaw(cctx, b.key, 0, b.body())
			cancel()
			if err != nil {
				t.lost.Add(1)
				return
			}
			fe, ok := flusserr.From(r.Err())
			switch {
			case r.Type != wire.ResponseError || !ok:
				l.bad.add("%s on %s: answered %v, want an error", b.name, name, r.Type)
			case fe.Code != b.code:
				l.bad.add("%s on %s: code %d (%s), want %d", b.name, name, fe.Code, fe.Message, b.code)
			default:
				t.badOK.Add(1)
			}
		}
		// A negative frame length ends the connection with a server
		// failure.
		if err := c.SendRawFrame([]byte{0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0}); err != nil {
			t.lost.Add(1)
			return
		}
		select {
		case <-c.Done():
			var sf *wire.ServerFailureError
			if errors.As(c.Err(), &sf) {
				t.badOK.Add(1)
			} else {
				l.bad.add("a negative frame length on %s: connection ended with %v, want a server failure", name, c.Err())
			}
		case <-time.After(callTimeout):
			l.bad.add("a negative frame length on %s: the connection stayed open %v", name, callTimeout)
		}
	})
}

package lincheck

import (
	"os"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op builds one operation of a synthetic history on producer "p" unless in
// names another.
func op(client int, in Input, call int64, out Output, ret int64) porcupine.Operation {
	if in.Producer == "" {
		in.Producer = "p"
	}
	if in.Via == "" {
		in.Via = "A"
	}
	if out.Unknown {
		ret = UnknownReturn
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

var (
	reg = func(snap int64) Input { return Input{Kind: Register, Snap: snap} }
	get = Input{Kind: Get}
	del = Input{Kind: Delete}

	created = Output{Created: true}
	exists  = Output{}
	found   = func(snap int64) Output { return Output{Snap: snap} }
	absent  = Output{Snap: Absent}
	ok      = Output{}
	unknown = Output{Unknown: true}
)

// TestModelSynthetic pins the model on hand-written histories: stale
// answers across sidecars must be refused, and the legal interleavings
// (concurrency, unknown outcomes) accepted.
func TestModelSynthetic(t *testing.T) {
	cases := []struct {
		name string
		want porcupine.CheckResult
		ops  []porcupine.Operation
	}{
		{"sequential life", porcupine.Ok, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, get, 20, found(1), 30),
			op(0, reg(2), 40, exists, 50),
			op(1, del, 60, ok, 70),
			op(0, get, 80, absent, 90),
			op(1, reg(3), 100, created, 110),
			op(0, get, 120, found(3), 130),
		}},
		{"GET returns a snapshot after its DELETE was acknowledged", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, del, 20, ok, 30),
			op(0, get, 40, found(1), 50),
		}},
		{"GET returns absent after a CREATED", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, get, 20, absent, 30),
		}},
		{"DELETE acknowledged but the snapshot stays (lost delete)", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, del, 20, ok, 30),
			op(0, reg(2), 40, exists, 50),
		}},
		{"ALREADY_EXISTS on nothing", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, exists, 10),
		}},
		{"two CREATED without a delete between", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, reg(2), 20, created, 30),
		}},
		{"GET sees a snapshot nobody stored", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, get, 20, found(7), 30),
		}},
		{"concurrent DELETE and GET may go either way", porcupine.Ok, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, del, 20, ok, 60),
			op(0, get, 30, found(1), 40),
			op(2, get, 35, absent, 45),
		}},
		{"but not back again", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, del, 20, ok, 80),
			op(2, get, 30, absent, 40),
			op(0, get, 50, found(1), 60),
		}},
		{"an unknown REGISTER may apply late", porcupine.Ok, []porcupine.Operation{
			op(0, reg(1), 0, unknown, 0),
			op(1, get, 20, absent, 30),
			op(1, get, 40, found(1), 50),
			op(2, reg(2), 60, exists, 70),
		}},
		{"an unknown REGISTER may never apply", porcupine.Ok, []porcupine.Operation{
			op(0, reg(1), 0, unknown, 0),
			op(1, get, 20, absent, 30),
			op(2, reg(2), 40, created, 50),
			op(1, get, 60, found(2), 70),
		}},
		{"an unknown REGISTER applies once", porcupine.Illegal, []porcupine.Operation{
			op(0, reg(1), 0, unknown, 0),
			op(1, get, 20, found(1), 30),
			op(1, get, 40, absent, 50),
		}},
		{"an unknown DELETE may apply late", porcupine.Ok, []porcupine.Operation{
			op(0, reg(1), 0, created, 10),
			op(1, del, 20, unknown, 0),
			op(0, get, 30, found(1), 40),
			op(0, get, 50, absent, 60),
		}},
		{"producer ids are independent", porcupine.Ok, []porcupine.Operation{
			op(0, Input{Kind: Register, Producer: "p", Snap: 1}, 0, created, 10),
			op(1, Input{Kind: Register, Producer: "q", Snap: 2}, 5, created, 15),
			op(0, Input{Kind: Get, Producer: "q"}, 20, found(2), 30),
			op(1, Input{Kind: Delete, Producer: "p"}, 25, ok, 35),
			op(0, Input{Kind: Get, Producer: "p"}, 40, absent, 50),
			op(1, Input{Kind: Get, Producer: "q"}, 40, found(2), 50),
		}},
		{"one bad id fails the history", porcupine.Illegal, []porcupine.Operation{
			op(0, Input{Kind: Register, Producer: "p", Snap: 1}, 0, created, 10),
			op(1, Input{Kind: Register, Producer: "q", Snap: 2}, 5, created, 15),
			op(0, Input{Kind: Delete, Producer: "q"}, 20, ok, 30),
			op(1, Input{Kind: Get, Producer: "q"}, 40, found(2), 50),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Check(c.ops, 10*time.Second)
			if v.Visualization != "" {
				defer os.Remove(v.Visualization)
			}
			if v.Result != c.want {
				t.Fatalf("checker says %s, want %s", v.Result, c.want)
			}
			if c.want == porcupine.Illegal {
				if v.Visualization == "" {
					t.Fatalf("no visualization written: %v", v.VisualizationErr)
				}
				if st, err := os.Stat(v.Visualization); err != nil || st.Size() == 0 {
					t.Fatalf("visualization %s is missing or empty: %v", v.Visualization, err)
				}
			}
		})
	}
}

// TestHistoryUnknown checks how History records unknown outcomes: a write
// stays open to the end of the history, a GET is left out.
func TestHistoryUnknown(t *testing.T) {
	h := NewHistory()
	a := h.Now()
	h.Add(0, Input{Kind: Register, Producer: "p", Snap: 1}, a, unknown, a+5)
	h.Add(0, Input{Kind: Get, Producer: "p"}, a+6, unknown, a+9)
	h.Add(0, Input{Kind: Delete, Producer: "p"}, a+10, ok, a+20)
	ops := h.Operations()
	if len(ops) != 2 {
		t.Fatalf("recorded %d operations, want 2 (the unknown GET left out)", len(ops))
	}
	if ops[0].Return != UnknownReturn || ops[1].Return != a+20 {
		t.Fatalf("return times %d, %d; want %d, %d", ops[0].Return, ops[1].Return, UnknownReturn, a+20)
	}
	if b := h.Now(); b < a {
		t.Fatalf("the clock went back: %d then %d", a, b)
	}
}

package lincheck

import (
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Kind is the operation a client called.
type Kind uint8

// The registry's three operations.
const (
	Register Kind = iota + 1
	Get
	Delete
)

func (k Kind) String() string {
	switch k {
	case Register:
		return "REGISTER"
	case Get:
		return "GET"
	case Delete:
		return "DELETE"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Absent is the state of a producer id with no snapshot. Snapshot ids are
// positive.
const Absent int64 = 0

// Input is what a client asked for.
type Input struct {
	Kind     Kind
	Producer string
	// Snap names the snapshot a REGISTER stores: the unique log end offset
	// it carried. Unused for GET and DELETE.
	Snap int64
	// Via names the target that served the call ("A", "B", "coord"), for
	// the visualization only.
	Via string
}

// Output is what the client learned.
type Output struct {
	// Unknown: no answer proves what happened (an error, a lost
	// connection, a client timeout). The call may have been applied, once,
	// at any time after it was made.
	Unknown bool
	// Created is REGISTER's answer: true for CREATED, false for
	// ALREADY_EXISTS.
	Created bool
	// Snap is GET's answer: the snapshot found, or Absent.
	Snap int64
	// Note is free text for the visualization (an error code).
	Note string
}

// UnknownReturn is the return time of a call whose outcome is unknown: after
// every other event, so the checker may linearize it anywhere after its
// call, or (at the very end) not at all.
const UnknownReturn int64 = math.MaxInt64

// Model is the registry's sequential specification, partitioned by producer
// id. The state of one partition is Absent or the id of the one snapshot
// stored.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byID := map[string][]porcupine.Operation{}
		var ids []string
		for _, op := range history {
			id := op.Input.(Input).Producer
			if _, ok := byID[id]; !ok {
				ids = append(ids, id)
			}
			byID[id] = append(byID[id], op)
		}
		sort.Strings(ids)
		out := make([][]porcupine.Operation, 0, len(ids))
		for _, id := range ids {
			out = append(out, byID[id])
		}
		return out
	},
	Init: func() any { return Absent },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(int64), input.(Input), output.(Output)
		switch in.Kind {
		case Register:
			switch {
			case out.Unknown:
				if s == Absent {
					return true, in.Snap
				}
				return true, s
			case out.Created:
				return s == Absent, in.Snap
			default:
				return s != Absent, s
			}
		case Get:
			if out.Unknown {
				return true, s
			}
			return s == out.Snap, s
		case Delete:
			// An acknowledged DELETE and one that may have been applied
			// both leave nothing: deleting nothing is a no-op.
			return true, Absent
		}
		return false, s
	},
	Equal: func(a, b any) bool { return a.(int64) == b.(int64) },
	Hash:  func(s any) uint64 { return uint64(s.(int64)) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(Input), output.(Output)
		var res string
		switch {
		case out.Unknown:
			res = "unknown"
		case in.Kind == Register && out.Created:
			res = "CREATED"
		case in.Kind == Register:
			res = "ALREADY_EXISTS"
		case in.Kind == Get:
			res = describeSnap(out.Snap)
		default:
			res = "ok"
		}
		if out.Note != "" {
			res += " (" + out.Note + ")"
		}
		switch in.Kind {
		case Register:
			return fmt.Sprintf("%s: REGISTER(%s, #%d) -> %s", in.Via, in.Producer, in.Snap, res)
		default:
			return fmt.Sprintf("%s: %s(%s) -> %s", in.Via, in.Kind, in.Producer, res)
		}
	},
	DescribeState: func(s any) string { return describeSnap(s.(int64)) },
}

func describeSnap(s int64) string {
	if s == Absent {
		return "absent"
	}
	return fmt.Sprintf("#%d", s)
}

// History collects operations from concurrent clients, timed by one
// monotonic clock.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// NewHistory starts an empty history whose clock starts now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now is the history's clock: nanoseconds since NewHistory, monotonic.
func (h *History) Now() int64 { return int64(time.Since(h.start)) }

// Add records a call made at call that returned out at ret. A call whose
// outcome is unknown is recorded as returning at UnknownReturn, whatever
// ret is; an unknown GET changes nothing and is left out.
func (h *History) Add(client int, in Input, call int64, out Output, ret int64) {
	if out.Unknown {
		if in.Kind == Get {
			return
		}
		ret = UnknownReturn
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
}

// Operations returns a copy of the recorded operations.
func (h *History) Operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops...)
}

// Verdict is the outcome of Check.
type Verdict struct {
	Result porcupine.CheckResult
	// Visualization is the HTML file porcupine drew for a history that is
	// not linearizable (or could not be decided), or "".
	Visualization string
	// VisualizationErr says why no visualization was written.
	VisualizationErr error
}

// Check decides whether ops are linearizable within timeout. A history that
// is not, or that the checker could not decide in time, is drawn to a
// temporary HTML file named in the verdict. Only porcupine.Ok is a pass.
func Check(ops []porcupine.Operation, timeout time.Duration) Verdict {
	res, info := porcupine.CheckOperationsVerbose(Model, ops, timeout)
	v := Verdict{Result: res}
	if res == porcupine.Ok {
		return v
	}
	f, err := os.CreateTemp("", "lincheck-*.html")
	if err != nil {
		v.VisualizationErr = err
		return v
	}
	err = porcupine.Visualize(Model, info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		v.VisualizationErr = err
		return v
	}
	v.Visualization = f.Name()
	return v
}

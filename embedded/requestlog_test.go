package embedded

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// answer logs one answered request of conn 1 with request id id.
func answer(l *requestLog, id int32) {
	l.done("CLIENT", wire.RequestDone{Header: wire.RequestHeader{APIKey: 1054, RequestID: id}, ConnID: 1})
}

// TestRequestLogForgetsOldest: past MaxLogEntries the log keeps the newest
// MaxLogEntries entries, oldest first with no gap, counts the rest as
// forgotten, and Log's since and limit read from what it keeps.
func TestRequestLogForgetsOldest(t *testing.T) {
	t.Parallel()
	s := &Server{controls: newControls(nil)}
	l := s.controls.log
	const extra = MaxLogEntries + 5
	for i := range MaxLogEntries + extra {
		answer(l, int32(i))
	}
	st := s.LogStats()
	if st.Entries != MaxLogEntries || st.Forgotten != extra || st.NextSeq != MaxLogEntries+extra+1 {
		t.Fatalf("stats %+v, want %d entries, %d forgotten, next %d", st, MaxLogEntries, extra, MaxLogEntries+extra+1)
	}
	all := s.Log(0, 0)
	if len(all) != MaxLogEntries {
		t.Fatalf("Log(0, 0) holds %d entries, want %d", len(all), MaxLogEntries)
	}
	for i, e := range all {
		if want := uint64(extra + 1 + i); e.Seq != want || e.RequestID != int32(want-1) {
			t.Fatalf("entry %d: seq %d request %d, want seq %d request %d", i, e.Seq, e.RequestID, want, want-1)
		}
	}
	if got := s.Log(st.NextSeq-3, 2); len(got) != 2 || got[0].Seq != st.NextSeq-3 || got[1].Seq != st.NextSeq-2 {
		t.Fatalf("Log(next-3, 2): %+v", got)
	}
	if got := s.Log(1, 1); len(got) != 1 || got[0].Seq != extra+1 {
		t.Fatalf("Log(1, 1) of a log that forgot seq 1: %+v, want the oldest kept", got)
	}
	if n := s.ClearLog(); n != MaxLogEntries || len(s.Log(0, 0)) != 0 {
		t.Fatalf("ClearLog removed %d, want %d and nothing left", n, MaxLogEntries)
	}
	answer(l, 0)
	if got := s.Log(0, 0); len(got) != 1 || got[0].Seq != st.NextSeq {
		t.Fatalf("after ClearLog: %+v, want one entry with seq %d", got, st.NextSeq)
	}
}

// BenchmarkRequestLogFull is the request log's cost per answered request
// once it holds MaxLogEntries: what every request pays on a long-running
// server.
func BenchmarkRequestLogFull(b *testing.B) {
	l := newRequestLog(nil)
	for i := range MaxLogEntries {
		answer(l, int32(i))
	}
	for b.Loop() {
		answer(l, 1)
	}
}

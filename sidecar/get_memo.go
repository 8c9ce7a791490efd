package sidecar

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
)

// Bounds of the GET answer memo: memoSlots answers, each kept as its
// encoded bytes when they are at most memoMaxBody (4 MiB at most in all),
// else as its tables in the coordinator's order, which count
// memoBucketBytes a bucket and memoTableBytes a table against
// memoMaxOrdered for all slots together.
const (
	memoSlots       = 2048
	memoMaxBody     = 2 << 10
	memoMaxOrdered  = 16 << 20
	memoBucketBytes = 24
	memoTableBytes  = 64
)

// getMemo keeps the GET answers of recently asked producer ids, each under
// the token of the cached znode state it was built from
// (producer.Registry.GetCached), so that a storm's GETs copy bytes instead
// of looking up every file, working out the coordinator's order and
// encoding again. An answer is used only while the registry's cache still
// holds that very state (Registry.CachedToken): any change of the znode, by
// anyone, makes a new state with a new token. Offsets files never change,
// so the token names the whole answer.
//
// An answer is kept in one of two forms. Without authorization, whose
// filter depends on the connection, the encoded answer is the same for
// every client and is kept when it is short enough (body). Otherwise the
// answer's tables are kept in the coordinator's order (ordered): encoding
// them, after authorization, is all that is left to do.
//
// It is direct-mapped (one answer per slot, the newest wins) and lock-free:
// each slot holds an immutable memoAnswer.
type getMemo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoAnswer]
	// ordered is what the kept tables count, all slots together.
	ordered atomic.Int64
}

type memoAnswer struct {
	id    string
	token uint64
	// body is the encoded answer listing every table, or nil.
	body []byte
	// answer, when ordered, is the snapshot with its tables as
	// coordinatorAnswer returns them; size is what they count.
	answer  producer.Snapshot
	ordered bool
	size    int64
}

func newGetMemo() *getMemo { return &getMemo{seed: maphash.MakeSeed()} }

func (m *getMemo) slot(id string) *atomic.Pointer[memoAnswer] {
	return &m.slots[maphash.String(m.seed, id)%memoSlots]
}

// idOf returns id as a string: the one an answer is kept under when there
// is one, so that a storm's GETs of one id do not each copy it, else a
// new copy.
func (m *getMemo) idOf(id []byte) string {
	a := m.slots[maphash.Bytes(m.seed, id)%memoSlots].Load()
	if a != nil && a.id == string(id) {
		return a.id
	}
	return string(id)
}

// lookup returns the answer kept for id under token.
func (m *getMemo) lookup(id string, token uint64) (*memoAnswer, bool) {
	a := m.slot(id).Load()
	if a == nil || a.token != token || a.id != id {
		return nil, false
	}
	return a, true
}

// store keeps id's answer under token: a copy of body (the encoded answer
// listing every table, nil with authorization) if it is short enough,
// else answer itself (its tables in the coordinator's order, never
// modified afterwards) if the bound on such answers allows. Otherwise it
// keeps nothing.
func (m *getMemo) store(id string, token uint64, answer producer.Snapshot, body []byte) {
	a := &memoAnswer{id: id, token: token}
	if body != nil && len(body) <= memoMaxBody {
		a.body = append([]byte(nil), body...)
	} else {
		size := int64(memoTableBytes * len(answer.Tables))
		for _, t := range answer.Tables {
			size += int64(memoBucketBytes * len(t.Buckets))
		}
		if m.ordered.Add(size) > memoMaxOrdered {
			m.ordered.Add(-size)
			return
		}
		a.answer, a.ordered, a.size = answer, true, size
	}
	if old := m.slot(id).Swap(a); old != nil {
		m.ordered.Add(-old.size)
	}
}

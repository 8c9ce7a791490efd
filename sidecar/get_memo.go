package sidecar

import (
	"hash/maphash"
	"sync/atomic"
)

// Bounds of the GET answer memo: memoSlots answers of at most memoMaxBody
// bytes each, 4 MiB at most in all.
const (
	memoSlots   = 2048
	memoMaxBody = 2 << 10
)

// getMemo keeps the encoded GET answers of recently asked producer ids,
// each under the token of the cached znode state it was built from
// (producer.Registry.GetCached), so that a storm's GETs copy bytes instead
// of looking up every file and encoding again. An answer is used only while
// the registry's cache still holds that very state (Registry.CachedToken):
// any change of the znode, by anyone, makes a new state with a new token.
// Offsets files never change, so the token names the whole answer.
//
// It is direct-mapped (one answer per slot, the newest wins) and lock-free:
// each slot holds an immutable memoAnswer.
type getMemo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoAnswer]
}

type memoAnswer struct {
	id    string
	token uint64
	body  []byte
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
func (m *getMemo) lookup(id string, token uint64) ([]byte, bool) {
	a := m.slot(id).Load()
	if a == nil || a.token != token || a.id != id {
		return nil, false
	}
	return a.body, true
}

// store keeps a copy of body as id's answer under token, if it is small
// enough.
func (m *getMemo) store(id string, token uint64, body []byte) {
	if len(body) > memoMaxBody {
		return
	}
	m.slot(id).Store(&memoAnswer{id: id, token: token, body: append([]byte(nil), body...)})
}

package sidecar

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
)

// TestGetMemoIDOf: a GET's id bytes become the string an answer is kept
// under when there is one (no copy per GET), else an equal copy; an answer
// of another id in the same slot is never taken for it.
func TestGetMemoIDOf(t *testing.T) {
	m := newGetMemo()
	if got := m.idOf([]byte("p-1")); got != "p-1" {
		t.Fatalf("idOf with nothing kept = %q, want p-1", got)
	}
	kept := string([]byte("p-1"))
	m.store(kept, 7, producer.Snapshot{}, []byte{1, 2})
	got := m.idOf([]byte("p-1"))
	if got != "p-1" || unsafe.StringData(got) != unsafe.StringData(kept) {
		t.Fatalf("idOf(p-1) = %q at %p, want the kept string at %p", got, unsafe.StringData(got), unsafe.StringData(kept))
	}
	// Another id hashed to the kept answer's slot.
	other := ""
	for i := 0; i < 1<<20 && other == ""; i++ {
		if id := "q-" + strconv.Itoa(i); m.slot(id) == m.slot(kept) {
			other = id
		}
	}
	if other == "" {
		t.Fatal("no id shares p-1's slot")
	}
	if got := m.idOf([]byte(other)); got != other {
		t.Fatalf("idOf(%q) = %q", other, got)
	}
	if _, ok := m.lookup(other, 7); ok {
		t.Fatalf("lookup(%q) found p-1's answer", other)
	}
}

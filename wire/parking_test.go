package wire

import (
	"slices"
	"testing"
)

// The list of a connection's parked requests (through the requests
// themselves) keeps every request not removed, whichever place a removal
// takes: the answer of a round removes requests from anywhere in it, and
// a closing connection takes the rest.
func TestParkedListRemovesFromAnyPlace(t *testing.T) {
	var q connRequests
	ps := make([]*parked, 6)
	for i := range ps {
		ps[i] = &parked{}
		q.addParked(ps[i])
	}
	// Newest first: ps[5] is the head, ps[0] the tail.
	for _, i := range []int{3, 5, 0} { // middle, head, tail
		q.unpark(ps[i])
		if ps[i].prev != nil || ps[i].next != nil {
			t.Errorf("request %d keeps its links after its removal", i)
		}
	}
	var left []*parked
	for p := q.parked; p != nil; p = p.next {
		if p.next != nil && p.next.prev != p {
			t.Fatal("a backward link does not match its forward link")
		}
		left = append(left, p)
	}
	if want := []*parked{ps[4], ps[2], ps[1]}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want requests 4, 2, 1", indexes(ps, left))
	}
	taken := q.takeParked()
	if !slices.Equal(taken, left) || q.parked != nil {
		t.Fatalf("took %v and left %v, want all of 4, 2, 1 and none", indexes(ps, taken), q.parked)
	}
	for _, p := range taken {
		if !p.taken || p.prev != nil || p.next != nil {
			t.Errorf("request %v: taken %v, links %v %v after takeParked", indexes(ps, []*parked{p}), p.taken, p.prev, p.next)
		}
	}
	for _, i := range []int{0, 3, 5} {
		if ps[i].taken {
			t.Errorf("request %d, removed before, was taken", i)
		}
	}
}

func indexes(all, some []*parked) []int {
	var out []int
	for _, p := range some {
		for i, q := range all {
			if p == q {
				out = append(out, i)
			}
		}
	}
	return out
}

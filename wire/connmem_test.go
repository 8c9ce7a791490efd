package wire

import (
	"net"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// Everything a request touches of its connection is one allocation: the
// session, the read waiter, the socket writer and its raw writer live
// inside the serverConn (in a storm of thousands of connections every
// further object is a further cold page; docs/performance.md). The test
// fails when one of them is allocated apart again.
func TestConnMemoryIsOneAllocation(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- nc
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer nc.Close()

	c := newServerConn(NewServer(ServerConfig{Mux: NewMux()}), nc)
	defer c.cancel()
	start := uintptr(unsafe.Pointer(c))
	end := start + unsafe.Sizeof(*c)
	inside := func(name string, p unsafe.Pointer, size uintptr) {
		t.Helper()
		if a := uintptr(p); a < start || a+size > end {
			t.Errorf("%s is allocated apart from its connection", name)
		}
	}
	inside("the session", unsafe.Pointer(c.sess), unsafe.Sizeof(*c.sess))
	inside("the socket writer", unsafe.Pointer(c.w), unsafe.Sizeof(*c.w))
	if runtime.GOOS == "linux" {
		if c.rw == nil {
			t.Fatal("a TCP connection has no read waiter on linux")
		}
		inside("the read waiter", unsafe.Pointer(c.rw), unsafe.Sizeof(*c.rw))
	}
	if c.w.raw != nil {
		inside("the raw writer", unsafe.Pointer(c.w.raw), unsafe.Sizeof(*c.w.raw))
	} else if runtime.GOOS == "linux" {
		t.Fatal("a TCP connection has no raw writer on linux")
	}
}

// The list of a connection's parked requests (through the requests
// themselves) keeps every request not removed, whichever place a removal
// takes: the answer of a round removes requests from anywhere in it, and
// a closing connection takes the rest.
func TestParkedListRemovesFromAnyPlace(t *testing.T) {
	var c serverConn
	ps := make([]*parked, 6)
	for i := range ps {
		ps[i] = &parked{c: &c}
		c.addParked(ps[i])
	}
	// Newest first: ps[5] is the head, ps[0] the tail.
	for _, i := range []int{3, 5, 0} { // middle, head, tail
		c.unpark(ps[i])
		if ps[i].prev != nil || ps[i].next != nil {
			t.Errorf("request %d keeps its links after its removal", i)
		}
	}
	var left []*parked
	for p := c.parked; p != nil; p = p.next {
		if p.next != nil && p.next.prev != p {
			t.Fatal("a backward link does not match its forward link")
		}
		left = append(left, p)
	}
	if want := []*parked{ps[4], ps[2], ps[1]}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want requests 4, 2, 1", indexes(ps, left))
	}
	taken := c.takeParked()
	if !slices.Equal(taken, left) || c.parked != nil {
		t.Fatalf("took %v and left %v, want all of 4, 2, 1 and none", indexes(ps, taken), c.parked)
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

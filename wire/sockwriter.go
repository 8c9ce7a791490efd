package wire

import (
	"net"
	"sync"
	"time"
)

// sockWriter is the only writer of one socket: whole frames are queued and
// never interleave. The goroutine that finds the socket idle writes the
// queue itself without blocking (one write system call when the socket has
// room, no hand-off); whatever the socket cannot take at once, and whatever
// is queued meanwhile, is written by a goroutine started for it (drain),
// which ends when the queue is empty. So write never waits for the peer to
// read, and an idle socket has no goroutine and no buffer of its own: queue
// buffers come from a pool and go back to it once written.
type sockWriter struct {
	nc      net.Conn
	raw     *rawWriter    // nil: every write goes through drain
	timeout time.Duration // bounds one blocking write; 0: none
	// maxQueued, if positive, makes write wait while this many bytes are
	// queued behind a write in progress: backpressure for a peer that does
	// not read.
	maxQueued int
	onFail    func(error)

	mu      sync.Mutex
	idle    sync.Cond // signalled when busy turns false or the queue empties
	buf     []byte    // queued bytes nobody is writing yet (pooled)
	busy    bool      // a goroutine owns the socket's write side
	err     error
	drainWG sync.WaitGroup // the drain goroutine, while one runs
}

// maxPooled bounds the queue buffers kept in the pool, so that one large
// answer does not stay allocated for every later small one.
const maxPooled = 64 << 10

// bufPool holds empty queue buffers (*[]byte) shared by every socket.
// Buffers travel as plain slices, so each put needs a *[]byte to carry
// one: holders keeps the ones getBuf emptied, so that a put takes one
// instead of allocating it.
var bufPool, holders sync.Pool

// getBuf returns an empty buffer from the pool, or nil.
func getBuf() []byte {
	p, ok := bufPool.Get().(*[]byte)
	if !ok {
		return nil
	}
	b := (*p)[:0]
	*p = nil
	holders.Put(p)
	return b
}

// putBuf gives b back to the pool unless it is too large to keep.
func putBuf(b []byte) {
	if c := cap(b); c == 0 || c > maxPooled {
		return
	}
	p, _ := holders.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	*p = b[:0]
	bufPool.Put(p)
}

func newSockWriter(nc net.Conn, timeout time.Duration, onFail func(error)) *sockWriter {
	w := &sockWriter{nc: nc, raw: newRawWriter(rawConnOf(nc)), timeout: timeout, onFail: onFail}
	w.idle.L = &w.mu
	return w
}

// write queues the concatenation of parts as one unit and starts writing it
// if nobody is. It copies parts and returns the writer's error, if any.
func (w *sockWriter) write(parts ...[]byte) error {
	return w.put(true, parts)
}

// queue is write without starting to write: the bytes wait for the next
// write or start, so that several frames go out in one system call.
func (w *sockWriter) queue(parts ...[]byte) error {
	return w.put(false, parts)
}

// start writes what queue left, if nobody is writing.
func (w *sockWriter) start() {
	w.put(true, nil)
}

func (w *sockWriter) put(start bool, parts [][]byte) error {
	w.mu.Lock()
	for w.maxQueued > 0 && w.busy && len(w.buf) >= w.maxQueued && w.err == nil {
		w.idle.Wait()
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if start && !w.busy && len(w.buf) == 0 && len(parts) == 1 {
		// The only unit to write goes out from the caller's bytes, not
		// from a copy in a queue buffer: the socket usually takes it whole.
		w.busy = true
		w.mu.Unlock()
		w.writeOut(parts[0], false)
		return nil
	}
	for _, p := range parts {
		if w.buf == nil && len(p) > 0 {
			w.buf = getBuf()
		}
		w.buf = append(w.buf, p...)
	}
	if w.busy || !start || len(w.buf) == 0 {
		w.mu.Unlock()
		return nil
	}
	w.busy = true
	b := w.buf
	w.buf = nil
	w.mu.Unlock()
	w.writeOut(b, true)
	return nil
}

// writeOut writes b for the goroutine that made the writer busy: as much
// as the socket takes now, then, if anything is left or was queued
// meanwhile, through a drain goroutine. owned says b is a queue buffer
// (given back to the pool once written); otherwise it is the caller's, and
// what the socket did not take is copied.
func (w *sockWriter) writeOut(b []byte, owned bool) {
	n := 0
	if w.raw != nil {
		var err error
		if n, err = w.raw.tryWrite(b); err != nil {
			if owned {
				putBuf(b)
			}
			w.failWith(err)
			return
		}
	}
	w.mu.Lock()
	switch {
	case n == len(b):
		if owned {
			putBuf(b)
		}
		if len(w.buf) == 0 {
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return
		}
		b, n = w.buf, 0
		w.buf = nil
	case !owned:
		// drain writes the rest first, then what was queued meanwhile.
		b, n = append(getBuf(), b[n:]...), 0
	}
	w.drainWG.Add(1)
	w.mu.Unlock()
	go w.drain(b, n)
}

// drain writes, blocking, what an inline write left (b from offset off) and
// then everything queued meanwhile, until the queue is empty or a write
// fails; then it gives the socket's write side back and ends.
func (w *sockWriter) drain(b []byte, off int) {
	defer w.drainWG.Done()
	for {
		if off < len(b) {
			if w.timeout > 0 {
				w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
			}
			_, err := w.nc.Write(b[off:])
			if err != nil {
				putBuf(b)
				w.failWith(err)
				return
			}
			if w.timeout > 0 {
				// Inline writes must not see a deadline that has passed.
				w.nc.SetWriteDeadline(time.Time{})
			}
		}
		putBuf(b)
		w.mu.Lock()
		if len(w.buf) == 0 {
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return
		}
		b, off = w.buf, 0
		w.buf = nil
		w.idle.Broadcast() // the queue is empty again
		w.mu.Unlock()
	}
}

// wait returns once no drain goroutine runs. Call it after flush, or after
// the socket was closed, when nothing more is written.
func (w *sockWriter) wait() { w.drainWG.Wait() }

// flush waits until everything queued has been written or the writer
// failed, and returns the writer's error.
func (w *sockWriter) flush() error {
	w.start()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy && w.err == nil {
		w.idle.Wait()
	}
	return w.err
}

func (w *sockWriter) failWith(err error) {
	w.mu.Lock()
	first := w.err == nil
	if first {
		w.err = err
		putBuf(w.buf)
		w.buf = nil
	}
	w.idle.Broadcast()
	w.mu.Unlock()
	if first {
		w.onFail(err)
	}
}

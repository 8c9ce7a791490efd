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
// is queued meanwhile, is written by run, the writer's own goroutine. So
// write never waits for the peer to read.
type sockWriter struct {
	nc      net.Conn
	raw     *rawWriter    // nil: every write goes through run
	timeout time.Duration // bounds one blocking write; 0: none
	// maxQueued, if positive, makes write wait while this many bytes are
	// queued behind a write in progress: backpressure for a peer that does
	// not read.
	maxQueued int
	stop      <-chan struct{} // ends run
	onFail    func(error)

	mu    sync.Mutex
	idle  sync.Cond // signalled when busy turns false or the queue empties
	buf   []byte    // queued bytes nobody is writing yet
	spare []byte    // an empty buffer to queue into next
	rest  []byte    // what an inline write left for run
	busy  bool      // a goroutine owns the socket's write side
	err   error
	kick  chan struct{}
}

// maxSpare bounds the buffer a sockWriter keeps for reuse, so an idle
// connection holds no more than a bufio.Writer would.
const maxSpare = 64 << 10

func newSockWriter(nc net.Conn, timeout time.Duration, stop <-chan struct{}, onFail func(error)) *sockWriter {
	w := &sockWriter{nc: nc, raw: newRawWriter(rawConnOf(nc)), timeout: timeout, stop: stop, onFail: onFail, kick: make(chan struct{}, 1)}
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
	for _, p := range parts {
		w.buf = append(w.buf, p...)
	}
	if w.busy || !start || len(w.buf) == 0 {
		w.mu.Unlock()
		return nil
	}
	w.busy = true
	b := w.buf
	w.buf, w.spare = w.spare[:0], nil
	w.mu.Unlock()

	n := 0
	if w.raw != nil {
		var err error
		if n, err = w.raw.tryWrite(b); err != nil {
			w.failWith(err)
			return nil
		}
	}
	w.mu.Lock()
	if n == len(b) {
		if cap(b) <= maxSpare {
			w.spare = b[:0]
		}
		if len(w.buf) == 0 {
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return nil
		}
	} else {
		w.rest = b[n:]
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return nil
}

// run writes, blocking, what write left: the rest of an inline write and
// everything queued until the queue is empty. It returns when stop is
// closed or a write fails.
func (w *sockWriter) run() {
	for {
		select {
		case <-w.kick:
		case <-w.stop:
			return
		}
		w.mu.Lock()
		b := w.rest
		w.rest = nil
		w.mu.Unlock()
		for {
			if len(b) > 0 {
				if w.timeout > 0 {
					w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
				}
				if _, err := w.nc.Write(b); err != nil {
					w.failWith(err)
					return
				}
				if w.timeout > 0 {
					// Inline writes must not see a deadline that has passed.
					w.nc.SetWriteDeadline(time.Time{})
				}
			}
			w.mu.Lock()
			if cap(b) <= maxSpare && cap(b) > cap(w.spare) {
				w.spare = b[:0]
			}
			if len(w.buf) == 0 {
				w.busy = false
				w.idle.Broadcast()
				w.mu.Unlock()
				break
			}
			b = w.buf
			w.buf, w.spare = w.spare[:0], nil
			w.idle.Broadcast() // the queue is empty again
			w.mu.Unlock()
		}
	}
}

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
		w.buf, w.rest = nil, nil
	}
	w.idle.Broadcast()
	w.mu.Unlock()
	if first {
		w.onFail(err)
	}
}

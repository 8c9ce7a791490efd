package zktls

import (
	"encoding/binary"
	"fmt"
)

// checkJKSShape walks a JKS store's layout before keystore-go reads it.
// keystore-go allocates every length and count it reads before it knows
// whether that many bytes follow, so a damaged file of a few hundred bytes
// can ask for tens of gigabytes and kill the process. Here every length
// must fit in the bytes left and every count must be one the bytes left
// could hold; a file that passes can only make keystore-go allocate about
// its own size.
//
// The layout (versions 1 and 2): magic FEEDFEED, version, entry count,
// then each entry: tag (1 key, 2 trusted certificate), alias (u16 length
// and bytes), creation time (8 bytes); a key entry carries its encrypted
// key (u32 length and bytes) and a certificate count, then certificates; a
// trusted entry carries one certificate. A certificate is, in version 2,
// its type (u16 length and bytes), then its bytes (u32 length and bytes).
// The store ends with a 20-byte SHA-1 digest.
func checkJKSShape(data []byte) error {
	const digestLen = 20
	if len(data) < 12+digestLen {
		return fmt.Errorf("%d bytes is too short for a JKS store", len(data))
	}
	w := jksWalker{b: data[:len(data)-digestLen]}
	if magic := w.u32(); magic != 0xFEEDFEED {
		return fmt.Errorf("magic %08x is not a JKS store's", magic)
	}
	version := w.u32()
	if version != 1 && version != 2 {
		return fmt.Errorf("JKS version %d is not 1 or 2", version)
	}
	entries := w.count(2 + 2 + 8) // tag, empty alias, time: the least an entry takes
	for i := uint32(0); i < entries && w.err == nil; i++ {
		tag := w.u32()
		w.skip(uint32(w.u16())) // alias
		w.skip(8)               // creation time
		switch tag {
		case 1:
			w.skip(w.u32()) // encrypted key
			certs := w.count(4)
			for j := uint32(0); j < certs && w.err == nil; j++ {
				w.certificate(version)
			}
		case 2:
			w.certificate(version)
		default:
			if w.err == nil {
				w.err = fmt.Errorf("entry %d has tag %d, neither a key (1) nor a trusted certificate (2)", i, tag)
			}
		}
	}
	return w.err
}

// jksWalker reads big-endian fields off b; the first field that does not
// fit sets err and every read after it returns zero.
type jksWalker struct {
	b   []byte
	off int
	err error
}

func (w *jksWalker) take(n uint32, what string) []byte {
	if w.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(w.b)-w.off) {
		w.err = fmt.Errorf("%s of %d bytes at offset %d runs past the end of the store (%d bytes left)", what, n, w.off, len(w.b)-w.off)
		return nil
	}
	p := w.b[w.off : w.off+int(n)]
	w.off += int(n)
	return p
}

func (w *jksWalker) u16() uint16 {
	if p := w.take(2, "a 2-byte field"); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (w *jksWalker) u32() uint32 {
	if p := w.take(4, "a 4-byte field"); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (w *jksWalker) skip(n uint32) { w.take(n, "a field") }

// count reads a count of items each at least least bytes long and refuses
// one the bytes left cannot hold.
func (w *jksWalker) count(least int) uint32 {
	n := w.u32()
	if w.err == nil && uint64(n)*uint64(least) > uint64(len(w.b)-w.off) {
		w.err = fmt.Errorf("a count of %d at offset %d is more than the %d bytes left can hold", n, w.off-4, len(w.b)-w.off)
		return 0
	}
	return n
}

func (w *jksWalker) certificate(version uint32) {
	if version == 2 {
		w.skip(uint32(w.u16())) // type, "X.509"
	}
	w.skip(w.u32())
}

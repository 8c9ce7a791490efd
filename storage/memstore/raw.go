package memstore

import "github.com/fluss-sidecar/fluss-sidecar/offsets"

// SetRawFile stores data at path as it is, whatever it holds: tests use it
// to plant an offsets file that another writer (or a corruption) would
// leave. The file is timestamped with the store's clock.
func (s *Store) SetRawFile(path string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = file{data: append([]byte(nil), data...), modTime: s.now()}
}

// RawFile returns the bytes stored at path, as they are, and whether a
// file is there.
func (s *Store) RawFile(path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[path]
	return append([]byte(nil), f.data...), ok
}

// RawSnapshot returns the producer's znode as stored: its bytes, its
// incarnation, and whether it exists.
func (s *Store) RawSnapshot(producerID string) ([]byte, offsets.Incarnation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.znodes[producerID]
	if !ok {
		return nil, offsets.Incarnation{}, false
	}
	return append([]byte(nil), z.data...), offsets.Incarnation{Czxid: z.czxid, Version: z.version}, true
}

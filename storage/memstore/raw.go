package memstore

// SetRawFile stores data at path as it is, whatever it holds: tests use it
// to plant an offsets file that another writer (or a corruption) would
// leave. The file is timestamped with the store's clock.
func (s *Store) SetRawFile(path string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = file{data: append([]byte(nil), data...), modTime: s.now()}
}

package remotestore

import (
	"testing"

	"gocloud.dev/blob"
)

// SetDirsMade sets the hook a local write calls once its directories exist
// and before it creates the file in them, for the tests of package
// remote_test.
func SetDirsMade(s *Store, f func(dir string)) { s.dirsMade = f }

// DirAttempts is dirAttempts, for those tests.
const DirAttempts = dirAttempts

// Driver is one blob driver the tests open a store on, for the
// conformance suite run from package remote_test.
type Driver struct {
	Name string
	// Open opens a store on a fresh, empty storage, closed at the end of
	// the test.
	Open func(t *testing.T) *Store
}

// Drivers returns every blob driver the tests open, the emulators of the
// cloud stores included (started for t).
func Drivers(t *testing.T) []Driver {
	var out []Driver
	for _, be := range backends(t) {
		out = append(out, Driver{Name: be.name, Open: func(t *testing.T) *Store {
			s := be.open(t, Options{})
			t.Cleanup(func() { s.Close() })
			return s
		}})
	}
	return out
}

// Bucket returns the store's bucket, the key prefix of its producers
// directory, and that directory on the local file system ("" for an
// object store).
func Bucket(s *Store) (b *blob.Bucket, producersKey, localProducers string) {
	return s.bucket, s.producersKey, s.localProducers
}

// FileKey is the store's fileKey.
func FileKey(s *Store, path string) (string, error) { return s.fileKey(path) }

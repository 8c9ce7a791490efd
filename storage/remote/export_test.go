package remote

// SetDirsMade sets the hook a local write calls once its directories exist
// and before it creates the file in them, for the tests of package
// remote_test.
func SetDirsMade(s *Store, f func(dir string)) { s.dirsMade = f }

// DirAttempts is dirAttempts, for those tests.
const DirAttempts = dirAttempts

package app

// ApplyFileLimitForTest is applyFileLimit, for tests in package app_test.
func (s *Settings) ApplyFileLimitForTest(f FileLimit) { s.applyFileLimit(f) }

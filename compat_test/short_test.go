package compat

import "testing"

// SkipIfShort skips t under go test -short (make check), which runs none of
// the suite's outside clients (Fluss's Java client, Flink, pyfluss, fluss-rs,
// compat_client.py, the Jackson reader) nor installs what they need. Without
// -short it does nothing: there a missing client or tool is installed or
// fails the test, as each runner says. It is exported for the package's
// external tests (package compat_test).
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("compat_test: runs an outside client (a JVM, Python or Rust); not run under -short")
	}
}

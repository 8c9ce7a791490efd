package remote

import (
	"strings"
	"testing"
)

// TestResolveRefusals: each form Resolve refuses, with the message that
// names why; a path with '..' is refused for every scheme.
func TestResolveRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dir, want string }{
		{"/../b", "must be absolute"},
		{"file:///../b", "must be absolute"},
		{"s3://bucket/../b", "'..' is not allowed"},
		{"gs://bucket/../b", "'..' is not allowed"},
		{"abfs://c@acct.dfs.core.windows.net/../b", "'..' is not allowed"},
		{"hdfs://nn:8020/../b", "'..' is not allowed"},
		{"mem:///../b", "'..' is not allowed"},
		{"s3:///../b", "no bucket name"},
		{"viewfs://c/../b", "unsupported scheme"},
	} {
		if _, err := Resolve(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q) = %v, want an error saying %q", c.dir, err, c.want)
		}
	}
	for _, dir := range []string{"/a/b", "s3://bucket/a", "hdfs://nn:8020/a", "mem://"} {
		if _, err := Resolve(dir); err != nil {
			t.Errorf("Resolve(%q) = %v", dir, err)
		}
	}
}

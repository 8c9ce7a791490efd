package app

import (
	"bytes"
	"os"
	"testing"
)

// TestIdentityGolden pins the bytes of the cleanup leader znode.
func TestIdentityGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/cleanup-leader.json")
	if err != nil {
		t.Fatal(err)
	}
	got := identityJSON("sidecar-0.example", 4242, "FLUSS://10.0.0.5:9123,CLIENT://10.0.0.5:9124", "0.3.0")
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

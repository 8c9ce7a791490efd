package hdfstest

import (
	"bytes"
	"os"
	"slices"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestCommands starts a cluster and runs each file command of the helper
// through Hadoop's client.
func TestCommands(t *testing.T) {
	c := Shared(t)
	data := []byte("hello\x00\xff world")
	if err := c.Put("/kit/a/b.bin", data); err != nil {
		t.Fatal(err)
	}
	got, err := c.Cat("/kit/a/b.bin")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Cat = %q, %v; want %q", got, err, data)
	}
	if err := c.Mkdir("/kit/owned", "someone", 0o700); err != nil {
		t.Fatal(err)
	}
	names, err := c.List("/kit")
	if err != nil || !slices.Equal(names, []string{"/kit/a/", "/kit/owned/"}) {
		t.Fatalf("List = %v, %v", names, err)
	}
	if _, err := c.Cat("/kit/missing"); err == nil {
		t.Fatal("Cat of a missing file succeeded")
	}
	if _, err := c.Do("no-such-command"); err == nil {
		t.Fatal("an unknown command succeeded")
	}
}

package zktls_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// FuzzStoreFile: Build never panics on a damaged store file of any type,
// as key store or as trust store; it returns a config or an error. The
// seeds are the kit's stores and some cut short.
func FuzzStoreFile(f *testing.F) {
	k := tlstest.New(f)
	for _, format := range tlstest.Formats() {
		for _, p := range []string{k.Client.Stores[format], k.CA.Trust[format]} {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, uint8(0))
			f.Add(b[:len(b)/2], uint8(1))
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		path := filepath.Join(dir, "store")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		formats := tlstest.Formats()
		st := zktls.Store{Location: path, Password: k.Password, Type: formats[int(which/2)%len(formats)]}
		s := zktls.Settings{TrustStore: st}
		if which%2 == 0 {
			s = zktls.Settings{KeyStore: st}
		}
		cfg, err := zktls.Build(s)
		if err == nil && cfg == nil {
			t.Fatal("no config and no error")
		}
	})
}

package app_test

import (
	"os"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

var sharedZK string

func TestMain(m *testing.M) {
	code := zktest.Run(m, func(addr string) { sharedZK = addr })
	storagetest.StopAzurite()
	os.Exit(code)
}

package app_test

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

var sharedZK string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { sharedZK = addr })
}

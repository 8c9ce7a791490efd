package main

import (
	"fmt"
	"io"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
)

// versionCmd prints the build: version, commit, build time, Go version.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: fluss-sidecar version\n\nPrints the version, commit, build time and Go version of this binary.")
			return 0
		}
		fmt.Fprintf(stderr, "fluss-sidecar version: unexpected argument %q\n", args[0])
		return 2
	}
	fmt.Fprint(stdout, buildinfo.Get().String())
	return 0
}

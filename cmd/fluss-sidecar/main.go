// Command fluss-sidecar serves the Fluss producer offsets registry, and talks
// to a running sidecar from the shell.
//
//	fluss-sidecar serve [--config FILE] [-Dkey=value ...] [--embedded] [--listen HOST:PORT] [--control HOST:PORT]
//	fluss-sidecar offsets register --bootstrap HOST:PORT --producer-id ID --offset TABLE[:PARTITION]:BUCKET=OFFSET ... [--ttl-ms N]
//	fluss-sidecar offsets get      --bootstrap HOST:PORT --producer-id ID
//	fluss-sidecar offsets delete   --bootstrap HOST:PORT --producer-id ID
//	fluss-sidecar control [--url URL] rule|wait|release|log|clock|store|reset|server ...
//	fluss-sidecar version | --version
//	fluss-sidecar offsets list|fsck|export --config server.yaml ...
//
// Every command and subcommand takes --help.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  fluss-sidecar serve [--config FILE] [-Dkey=value ...] [--embedded] [--listen HOST:PORT] [--control HOST:PORT]
  fluss-sidecar offsets register --bootstrap HOST:PORT --producer-id ID --offset TABLE[:PARTITION]:BUCKET=OFFSET ... [--ttl-ms N]
  fluss-sidecar offsets get      --bootstrap HOST:PORT --producer-id ID
  fluss-sidecar offsets delete   --bootstrap HOST:PORT --producer-id ID
  fluss-sidecar control [--url URL] rule|wait|release|log|clock|store|reset|server ...
  fluss-sidecar version | --version
  fluss-sidecar offsets list     --config server.yaml [--output json|table] [--expired]
  fluss-sidecar offsets fsck     --config server.yaml [--repair] [--grace-period DURATION]
  fluss-sidecar offsets export   --config server.yaml --format parquet|arrow|csv|jsonl --output FILE

Run 'fluss-sidecar COMMAND --help' (or 'fluss-sidecar offsets COMMAND --help') for details.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		if wantsHelp(args[1:]) {
			fmt.Fprint(stdout, serveHelp)
			return 0
		}
		return serve(args[1:], stdout, stderr)
	case "offsets":
		return offsetsCmd(args[1:], stdout, stderr)
	case "control":
		return controlCmd(args[1:], stdout, stderr)
	case "version", "--version":
		return versionCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
	return 2
}

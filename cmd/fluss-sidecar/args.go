package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/app"
)

// wantsHelp reports whether args ask for help (-h, -help, --help), before
// any "--" that ends the flags.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// splitConfigArgs takes the configuration arguments (--config FILE,
// --config=FILE, -c FILE, -Dkey=value) out of args, in order, and returns
// them apart from the rest.
func splitConfigArgs(args []string) (cfgArgs, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config" || a == "-c":
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%s needs a file", a)
			}
			cfgArgs = append(cfgArgs, a, args[i+1])
			i++
		case strings.HasPrefix(a, "--config="), strings.HasPrefix(a, "-D"):
			cfgArgs = append(cfgArgs, a)
		default:
			rest = append(rest, a)
		}
	}
	return cfgArgs, rest, nil
}

// parseCommandArgs takes the configuration arguments out of args (see
// splitConfigArgs), parses the rest into fs and refuses positional
// arguments. On false it has said why on stderr (or fs has) and the
// command exits with 2.
func parseCommandArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (cfgArgs []string, ok bool) {
	cfgArgs, rest, err := splitConfigArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, false
	}
	if err := fs.Parse(rest); err != nil {
		return nil, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return nil, false
	}
	return cfgArgs, true
}

// printHelp writes a command's usage line, description and flags to w.
func printHelp(w io.Writer, fs *flag.FlagSet, usageLine, description string) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", usageLine, strings.TrimSpace(description))
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// configHelp describes the configuration arguments every command that reads
// configuration takes.
const configHelp = `  --config FILE
    	a Fluss-style YAML file (server.yaml); may be repeated, later files win
  -Dkey=value
    	set one configuration key, over any file`

// serveHelp is `serve --help`.
const serveHelp = `usage: fluss-sidecar serve [--config FILE] [-Dkey=value ...] [--embedded] [--listen HOST:PORT] [--tablet-listen HOST:PORT] [--control HOST:PORT]

Serves the producer offsets registry (and, with ` + app.KeyMode + `: proxy, forwards
every other Fluss API to the coordinator) until SIGINT or SIGTERM. It reads a
Fluss server.yaml; keys it does not use are ignored. README.md lists the keys.

configuration:
` + configHelp + `
  --embedded
    	` + app.KeyEmbedded + `: true (data in memory, no ZooKeeper)
  --listen HOST:PORT
    	` + app.KeyBindListeners + `: FLUSS://HOST:PORT (port 0: any free port)
  --tablet-listen HOST:PORT
    	` + app.KeyTabletListeners + `: FLUSS://HOST:PORT, the tablet-server
    	endpoint GET_METADATA names (default: the listener's host, a free port)
  --control HOST:PORT
    	` + app.KeyEmbeddedControl + `: embedded mode's control API over
    	HTTP (loopback only; a bare PORT binds 127.0.0.1); its URL is the
    	second line of stdout
`

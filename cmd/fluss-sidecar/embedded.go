package main

import (
	"fmt"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// serveFlags takes the flags of `serve` that are shorthands for keys:
//
//	--embedded           sidecar.embedded: true (data in memory, no ZooKeeper)
//	--listen HOST:PORT   bind.listeners: FLUSS://HOST:PORT (port 0: any free port)
//	--tablet-listen HOST:PORT
//	                     sidecar.tablet-server.listeners: FLUSS://HOST:PORT
//	--control HOST:PORT  sidecar.embedded.control.listen: HOST:PORT (embedded
//	                     mode's control API over HTTP, loopback only)
//
// It returns the other arguments for loadConfig and applies the shorthands
// to cfg after it is loaded, so that they win over the file and -D.
func serveFlags(args []string) (rest []string, apply func(*config.Config), err error) {
	var set [][2]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--embedded" || a == "-embedded":
			set = append(set, [2]string{app.KeyEmbedded, "true"})
		case a == "--listen" || a == "-listen":
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%s needs HOST:PORT", a)
			}
			i++
			set = append(set, [2]string{app.KeyBindListeners, listenValue(args[i])})
		case strings.HasPrefix(a, "--listen="):
			set = append(set, [2]string{app.KeyBindListeners, listenValue(strings.TrimPrefix(a, "--listen="))})
		case a == "--tablet-listen" || a == "-tablet-listen":
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%s needs HOST:PORT", a)
			}
			i++
			set = append(set, [2]string{app.KeyTabletListeners, listenValue(args[i])})
		case strings.HasPrefix(a, "--tablet-listen="):
			set = append(set, [2]string{app.KeyTabletListeners, listenValue(strings.TrimPrefix(a, "--tablet-listen="))})
		case a == "--control" || a == "-control":
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%s needs HOST:PORT", a)
			}
			i++
			set = append(set, [2]string{app.KeyEmbeddedControl, args[i]})
		case strings.HasPrefix(a, "--control="):
			set = append(set, [2]string{app.KeyEmbeddedControl, strings.TrimPrefix(a, "--control=")})
		default:
			rest = append(rest, a)
		}
	}
	return rest, func(c *config.Config) {
		for _, kv := range set {
			c.Set(kv[0], kv[1])
		}
	}, nil
}

// listenValue turns HOST:PORT into a FLUSS listener; a value that already
// names listeners (NAME://HOST:PORT) is kept.
func listenValue(v string) string {
	if strings.Contains(v, "://") {
		return v
	}
	return "FLUSS://" + v
}

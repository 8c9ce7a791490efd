// Command zkrun runs a standalone ZooKeeper in the foreground for local
// development ("make run"): data and log live under -dir, and the server is
// stopped on SIGINT or SIGTERM. It needs the same installation as package
// zktest (apt-get install -y zookeeper).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

func main() {
	dir := flag.String("dir", "", "directory for zoo.cfg, data/ and zookeeper.log (required)")
	port := flag.Int("port", 2181, "client port")
	bind := flag.String("bind", "127.0.0.1", "client address to bind")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "zkrun: -dir is required")
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := zktest.ServerConfig{Dir: *dir, Port: *port, Bind: *bind}
	srv, err := zktest.StartConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "zkrun: %v\n", err)
		os.Exit(1)
	}
	cfg = srv.Config()
	fmt.Printf("zkrun: ZooKeeper listening on %s (data %s, log %s)\n", srv.Addr, cfg.DataDir(), cfg.LogPath())

	status := 0
	select {
	case <-ctx.Done():
		fmt.Println("zkrun: stopping ZooKeeper")
	case <-srv.Exited():
		fmt.Fprintf(os.Stderr, "zkrun: ZooKeeper exited unexpectedly\n%s\n", srv.LogTail(4096))
		status = 1
	}
	srv.Close()
	os.Exit(status)
}

// Command hdfsrun runs an HDFS minicluster (package hdfstest) on 127.0.0.1
// in the foreground for `make hdfs`, prints the remote.data.dir to give
// the sidecar, and stops it on Ctrl-C or SIGTERM. The data live as long as
// the cluster runs: each start formats a fresh namespace.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
)

func main() {
	dir := flag.String("dir", "", "folder for the cluster's data and log (default: a temporary one, removed at exit)")
	port := flag.Int("port", 0, "NameNode RPC port on 127.0.0.1 (default: a free one)")
	dataNodes := flag.Int("datanodes", 1, "number of DataNodes")
	flag.Parse()
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "hdfsrun:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := hdfstest.Start(ctx, hdfstest.Config{Dir: *dir, Port: *port, DataNodes: *dataNodes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hdfsrun:", err)
		os.Exit(1)
	}
	fmt.Printf("HDFS NameNode on %s (pid %d, log %s)\n", c.Addr(), c.Pid(), c.LogPath())
	fmt.Printf("remote.data.dir: %s\n", c.URL("/fluss"))
	fmt.Printf("in another terminal: make run REMOTE_DATA_DIR=%s\n", c.URL("/fluss"))
	fmt.Println("Ctrl-C stops it")
	<-ctx.Done()
	c.Close()
}

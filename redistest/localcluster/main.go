// Command localcluster starts a local Redis Cluster (3 primaries, 3
// replicas, free loopback ports), prints its seed list and runs until
// interrupted (SIGINT, SIGTERM or SIGHUP), then stops every node and
// removes their directory. `make cluster` runs it; point the demo
// at it with `go run ./examples/seckill -redis <seed list>`.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/luagen/luagen/redistest"
)

func main() {
	dir, err := os.MkdirTemp("", "luagen-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	c, err := redistest.NewCluster(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
	defer c.Stop()
	fmt.Printf("cluster up: 3 primaries + 3 replicas in %s\n", dir)
	fmt.Printf("seed list:  %s\n", strings.Join(c.Addrs(), ","))
	fmt.Printf("try:        go run ./examples/seckill -redis %s\n", strings.Join(c.Addrs(), ","))
	fmt.Println("Ctrl-C stops every node.")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	<-sig
}

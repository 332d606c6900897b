// Package layout places the benchmarks' redis-server and the benchmark
// process on the machine's CPUs, as LUAGEN_BENCH_LAYOUT says.
//
// In production the Redis server runs on a host of its own and its clients
// on others; here they share one machine. By default
// (LUAGEN_BENCH_LAYOUT=split) the redis-server a benchmark starts gets the
// first CPU the benchmark may run on, and the benchmark process (every
// client library under test) the others, with GOMAXPROCS set to their
// number, so that clients do not take CPU time from the server and the
// client's own cost per call shows. LUAGEN_BENCH_LAYOUT=shared leaves both
// on every CPU, as a single small host running the server and its clients
// would be. With one CPU, or off Linux, the default falls back to shared
// (and says so); an explicit split fails.
package layout

import (
	"fmt"
	"os"
)

// Apply places the redis-server with process id serverPID and this process
// as $LUAGEN_BENCH_LAYOUT says ("split", the default, or "shared") and
// returns the line a benchmark prints above its table, e.g. "split:
// redis-server on CPU 0, the benchmark on CPUs [1] (GOMAXPROCS 1)". An
// unknown layout, or a split asked for explicitly that cannot be made, is
// an error, with both processes left where they were.
func Apply(serverPID int) (string, error) {
	desc := "shared: redis-server and the benchmark on the same CPUs"
	switch l := os.Getenv("LUAGEN_BENCH_LAYOUT"); l {
	case "", "split":
		split, err := splitCPUs(serverPID)
		switch {
		case err == nil:
			return "split: " + split, nil
		case l == "":
			return desc + fmt.Sprintf(" (the default layout, split, failed: %v)", err), nil
		default:
			return "", fmt.Errorf("LUAGEN_BENCH_LAYOUT=split: %w", err)
		}
	case "shared":
		return desc, nil
	default:
		return "", fmt.Errorf("LUAGEN_BENCH_LAYOUT=%q: want split or shared", l)
	}
}

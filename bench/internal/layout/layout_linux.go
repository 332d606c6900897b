//go:build linux

package layout

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// setProcessAffinity sets the CPUs of every thread of process pid
// (sched_setaffinity(2) takes one thread). Threads started later inherit
// the mask of the thread that starts them, so two passes catch one started
// during the first.
func setProcessAffinity(pid int, s *unix.CPUSet) error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, s); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("sched_setaffinity(%d): %w", tid, err)
			}
		}
	}
	return nil
}

// splitCPUs gives redis-server (every thread of process server) the first
// CPU this process may run on and this process the others, and sets
// GOMAXPROCS to the number of the others. It fails with fewer than two
// CPUs, and then leaves both processes on every CPU they had.
func splitCPUs(server int) (string, error) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return "", fmt.Errorf("sched_getaffinity: %w", err)
	}
	var srv, cli unix.CPUSet
	first, rest := -1, []int{}
	for cpu := range 1024 { // what a CPUSet holds
		switch {
		case !allowed.IsSet(cpu):
		case first < 0:
			first = cpu
			srv.Set(cpu)
		default:
			rest = append(rest, cpu)
			cli.Set(cpu)
		}
	}
	if len(rest) == 0 {
		return "", errors.New("one CPU: nothing to split")
	}
	if err := setProcessAffinity(server, &srv); err != nil {
		return "", errors.Join(err, setProcessAffinity(server, &allowed))
	}
	if err := setProcessAffinity(os.Getpid(), &cli); err != nil {
		return "", errors.Join(err, setProcessAffinity(server, &allowed), setProcessAffinity(os.Getpid(), &allowed))
	}
	goruntime.GOMAXPROCS(len(rest))
	return fmt.Sprintf("redis-server on CPU %d, the benchmark on CPUs %v (GOMAXPROCS %d)", first, rest, len(rest)), nil
}

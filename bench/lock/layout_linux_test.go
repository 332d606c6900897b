//go:build linux

package lock

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// cpuSet is the kernel's cpu_set_t (sched_setaffinity(2)), for up to
// 1024 CPUs.
type cpuSet [16]uint64

func (s *cpuSet) has(cpu int) bool { return s[cpu/64]&(1<<(cpu%64)) != 0 }
func (s *cpuSet) add(cpu int)      { s[cpu/64] |= 1 << (cpu % 64) }

func getAffinity(tid int) (cpuSet, error) {
	var s cpuSet
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), unsafe.Sizeof(s), uintptr(unsafe.Pointer(&s)))
	if e != 0 {
		return s, e
	}
	return s, nil
}

func setAffinity(tid int, s *cpuSet) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(*s), uintptr(unsafe.Pointer(s)))
	if e != 0 {
		return e
	}
	return nil
}

// setProcessAffinity sets the CPUs of every thread of process pid. Threads
// started later inherit the mask of the thread that starts them, so two
// passes catch one started during the first.
func setProcessAffinity(pid int, s *cpuSet) error {
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
			if err := setAffinity(tid, s); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("sched_setaffinity(%d): %w", tid, err)
			}
		}
	}
	return nil
}

// splitCPUs gives redis-server (every thread of process server) the first
// CPU this process may run on and this process the others, as if the
// server ran on a host of its own, and sets GOMAXPROCS to the number of
// the others; see "CPU layout" in lock_test.go. It fails with fewer than
// two CPUs, and then leaves both processes on every CPU they had. (Raw
// syscalls: the standard library has no wrapper, and golang.org/x/sys is
// not among the libraries this project may depend on directly.)
func splitCPUs(server int) (string, error) {
	allowed, err := getAffinity(0)
	if err != nil {
		return "", fmt.Errorf("sched_getaffinity: %w", err)
	}
	var srv, cli cpuSet
	first, rest := -1, []int{}
	for cpu := range len(allowed) * 64 {
		switch {
		case !allowed.has(cpu):
		case first < 0:
			first = cpu
			srv.add(cpu)
		default:
			rest = append(rest, cpu)
			cli.add(cpu)
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

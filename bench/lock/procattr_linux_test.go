package lock

import "syscall"

// procAttr makes the kernel SIGKILL redis-server should the benchmark
// binary die without stopping it (a -timeout panic, Ctrl-C).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

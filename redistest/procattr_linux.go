package redistest

import "syscall"

// procAttr puts redis-server in its own process group (a Ctrl-C in the
// terminal reaches the test binary, which then stops the server by PID) and
// asks the kernel to SIGKILL it should the test binary die without cleaning
// up — a `go test -timeout` panic, an OOM kill — so no server outlives CI.
// Pdeathsig follows the thread that started the child (golang/go#27505);
// Go only ends threads whose goroutine locked them, which nothing here does.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

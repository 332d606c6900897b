//go:build !linux

package redistest

import "syscall"

// procAttr puts redis-server in its own process group; see the Linux
// version for why.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

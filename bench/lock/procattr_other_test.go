//go:build !linux

package lock

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }

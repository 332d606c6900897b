//go:build unix

package gen

import "golang.org/x/sys/unix"

func syscallMkfifo(p string) error { return unix.Mkfifo(p, 0o644) }

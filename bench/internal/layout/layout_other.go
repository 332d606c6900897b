//go:build !linux

package layout

import "errors"

func splitCPUs(int) (string, error) {
	return "", errors.New("CPU affinity is set on Linux only")
}

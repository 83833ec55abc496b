//go:build !linux

package collector

import "os"

// readSmallFile reads the whole file at path into *buf.
func readSmallFile(path string, buf *[]byte) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	*buf = append((*buf)[:0], data...)
	return len(data), nil
}

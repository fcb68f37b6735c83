//go:build !linux

package spool

import "os"

// writeAll writes bufs in order with one write of their concatenation.
func writeAll(f *os.File, bufs [][]byte) error {
	var n int
	for _, b := range bufs {
		n += len(b)
	}
	all := make([]byte, 0, n)
	for _, b := range bufs {
		all = append(all, b...)
	}
	_, err := f.Write(all)
	return err
}

//go:build !linux

package spool

import "os"

// canMap: outside Linux every batch is written.
const canMap = false

// mapping is unused outside Linux.
type mapping struct{ alloc int64 }

func (w *Writer) copyIn(bufs [][]byte, n int, keep int64) error { return pwritev(w.f, bufs, w.off) }

func (w *Writer) unmap() {}

func (w *Writer) reserve(end, keep int64) error { return nil }

// pwritev writes bufs in order at off with one write of their concatenation.
func pwritev(f *os.File, bufs [][]byte, off int64) error {
	var n int
	for _, b := range bufs {
		n += len(b)
	}
	all := make([]byte, 0, n)
	for _, b := range bufs {
		all = append(all, b...)
	}
	_, err := f.WriteAt(all, off)
	return err
}

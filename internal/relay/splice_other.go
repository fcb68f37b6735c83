//go:build !linux

package relay

import (
	"errors"
	"io"
	"os"
)

// spliceMin: outside Linux there is no zero-copy path; every chunk is read
// and written.
const spliceMin = 1 << 62

// zeroCopy is unused outside Linux.
type zeroCopy struct{}

func newZeroCopy(io.Reader, io.Writer) *zeroCopy { return nil }

func (z *zeroCopy) close() {}

var errNoSplice = errors.New("source cannot be spliced")

func (z *zeroCopy) take([]byte) (int, error) { return 0, errNoSplice }

func (z *zeroCopy) forward([]byte) error { return errNoSplice }

// growPipe: pipe sizes are fixed outside Linux.
func growPipe(*os.File, int) {}

package spool

import (
	"os"
	"syscall"
	"unsafe"
)

// writeAll writes bufs in order with writev(2), so a large record goes to
// the file without first being copied behind its header.
func writeAll(f *os.File, bufs [][]byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(bufs) > 0 {
			iov := make([]syscall.Iovec, 0, len(bufs))
			for _, b := range bufs {
				if len(b) > 0 {
					v := syscall.Iovec{Base: &b[0]}
					v.SetLen(len(b))
					iov = append(iov, v)
				}
			}
			if len(iov) == 0 {
				return true
			}
			n, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
			if e == syscall.EINTR {
				continue
			}
			if e != 0 {
				werr = e
				return true
			}
			// Drop what was written; go on with the rest.
			left := int(n)
			for len(bufs) > 0 && left >= len(bufs[0]) {
				left -= len(bufs[0])
				bufs = bufs[1:]
			}
			if len(bufs) > 0 {
				bufs[0] = bufs[0][left:]
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return &os.PathError{Op: "write", Path: f.Name(), Err: werr}
	}
	return nil
}

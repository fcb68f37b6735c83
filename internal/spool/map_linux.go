package spool

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// canMap: on Linux short batches go into a shared mapping of the file.
const canMap = true

// Mapping sizes. The window is what one mapping covers; the file is
// allocated ahead in steps of the same size, so a SIGKILLed writer leaves
// at most one step of zeros behind its last record.
const (
	window      = 1 << 20
	reserveStep = 4 << 20 // ahead of writes, which come in bulk
	pageSize    = 4096
	// populateStep is how much of the window is faulted in at a time,
	// ahead of the copies: a window that only a few short records go
	// into (long lines are written, not mapped) then costs the process
	// this much resident memory, not the whole window.
	populateStep = 256 << 10
)

// mapping is the window of the file that is mapped for writing.
type mapping struct {
	mem   []byte // nil when nothing is mapped
	start int64  // the file offset of mem[0]
	alloc int64  // the file is allocated (and sized) up to here
	// populated is closed once the pages being faulted in are; nil when
	// nothing runs. populatedTo is the file offset up to which the
	// window's pages are faulted in or being faulted in.
	populated   chan struct{}
	populatedTo int64
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault pages in,
// writable, as a write to each would.
const madvPopulateWrite = 23

var errNoAlloc = errors.New("file system cannot pre-allocate")

// copyIn copies bufs (n bytes) into the mapping at the end of the last
// record, moving the window first when they do not fit in it, with keep
// bytes allocated behind them. When the file system cannot pre-allocate,
// the writer stops mapping and writes instead.
func (w *Writer) copyIn(bufs [][]byte, n int, keep int64) error {
	end := w.off + int64(n)
	if err := w.reserve(end, keep); err != nil {
		return err
	}
	if w.noAlloc {
		w.noMap = true
		return pwritev(w.f, bufs, w.off)
	}
	if w.m.mem == nil || w.off < w.m.start || end > w.m.start+int64(len(w.m.mem)) {
		if err := w.slide(end); err != nil {
			if errors.Is(err, errNoAlloc) {
				w.noMap = true
				return pwritev(w.f, bufs, w.off)
			}
			return err
		}
	}
	err := copyMapped(w.m.mem[w.off-w.m.start:], bufs)
	w.populateAhead(end)
	return err
}

// populateAhead starts faulting in the next step of the window once the
// copies have come within half a step of what is faulted in, unless the
// last step is still being faulted in.
func (w *Writer) populateAhead(end int64) {
	m := &w.m
	stop := m.start + int64(len(m.mem))
	if m.populatedTo >= stop || end+populateStep/2 < m.populatedTo {
		return
	}
	if m.populated != nil {
		select {
		case <-m.populated:
		default:
			return
		}
	}
	from := max(m.populatedTo, end&^(pageSize-1))
	to := min(stop, from+populateStep)
	m.populated = populate(m.mem[from-m.start : to-m.start])
	m.populatedTo = to
}

// slide maps a window that starts at the page of the last record's end and
// reaches at least to end, allocating the file that far first: a write to a
// mapped page that the file system has no room for would kill the process
// with SIGBUS, where fallocate fails with ENOSPC.
func (w *Writer) slide(end int64) error {
	start := w.off &^ (pageSize - 1)
	size := max(int64(window), (end-start+pageSize-1)&^(pageSize-1))
	if err := w.allocate(start+size, end); err != nil {
		return err
	}
	w.unmap()
	mem, err := syscall.Mmap(int(w.f.Fd()), start, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map: %w", err)
	}
	w.m.mem, w.m.start = mem, start
	w.m.populatedTo = start + min(size, populateStep)
	w.m.populated = populate(mem[:w.m.populatedTo-start])
	return nil
}

// populate faults the pages of mem in on another thread, a step at a time
// (populateAhead starts the next one as the copies come near). The first write
// to a page of a mapped file costs a page fault (3-5 µs here, the file
// system's work for the block included); done here, it is off the path
// that forwards lines, and the copy of a line into the mapping is a copy.
// On a kernel without MADV_POPULATE_WRITE it does nothing and the faults
// happen as lines are copied in. unmap waits for it.
func populate(mem []byte) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), madvPopulateWrite)
	}()
	return done
}

// allocate makes the file allocated up to want, or, when there is no room
// for that, up to the page that holds need.
func (w *Writer) allocate(want, need int64) error {
	if w.m.alloc >= want {
		return nil
	}
	from := max(w.m.alloc, w.off)
	err := syscall.Fallocate(int(w.f.Fd()), 0, from, want-from)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) {
		want = (need + pageSize - 1) &^ (pageSize - 1)
		err = syscall.Fallocate(int(w.f.Fd()), 0, from, want-from)
	}
	switch {
	case errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL):
		return errNoAlloc
	case err != nil:
		return err
	}
	w.m.alloc = want
	return nil
}

// reserve allocates the file ahead of a write that reaches end, in steps
// (a buffered write into allocated blocks costs the file system less than
// one that must reserve them, about a tenth of the write here), and at
// least keep bytes behind end. It fails only when keep bytes behind end
// cannot be had: the write would take the room kept for the end record.
// Otherwise failing is fine: the write then finds out whether there is
// room.
func (w *Writer) reserve(end, keep int64) error {
	if end+keep <= w.m.alloc || w.noAlloc {
		return nil
	}
	err := w.allocate(max(end+keep, w.m.alloc)+reserveStep, end+keep)
	switch {
	case errors.Is(err, errNoAlloc):
		w.noAlloc = true
	case err != nil && keep > 0:
		return fmt.Errorf("keep room for the end record: %w", err)
	}
	return nil
}

// unmap drops the window. The file keeps what was allocated.
func (w *Writer) unmap() {
	if w.m.populated != nil {
		<-w.m.populated
		w.m.populated = nil
	}
	if w.m.mem != nil {
		syscall.Munmap(w.m.mem)
		w.m.mem, w.m.populatedTo = nil, 0
	}
}

// copyMapped copies bufs to dst, turning a fault on the mapping (the file
// shrunk under us, or a copy-on-write file system ran out of room) into an
// error instead of a crash.
func copyMapped(dst []byte, bufs [][]byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write to mapped spool: %v", r)
		}
	}()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	for _, b := range bufs {
		dst = dst[copy(dst, b):]
	}
	return nil
}

// pwritev writes bufs in order at off with pwritev(2), so a large record
// goes to the file without first being copied behind its header.
func pwritev(f *os.File, bufs [][]byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	iov := make([]syscall.Iovec, 0, min(len(bufs), 1024))
	err = rc.Write(func(fd uintptr) bool {
		for len(bufs) > 0 {
			iov = iov[:0]
			for _, b := range bufs {
				if len(iov) == cap(iov) {
					break
				}
				if len(b) > 0 {
					v := syscall.Iovec{Base: &b[0]}
					v.SetLen(len(b))
					iov = append(iov, v)
				}
			}
			if len(iov) == 0 {
				return true
			}
			n, _, e := syscall.Syscall6(syscall.SYS_PWRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)), uintptr(off), 0, 0)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 {
				werr = e
				return true
			}
			if n == 0 {
				werr = syscall.EIO
				return true
			}
			off += int64(n)
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
	return werr
}

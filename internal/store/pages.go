package store

import (
	"encoding/binary"
	"fmt"
	"os"
)

// checkTree walks the database file's B+trees page by page with plain
// reads, not through bbolt: from the root bucket's page down every branch,
// into every nested bucket (inline ones included). It returns what does
// not hold: a page id outside the file, a page whose header names another
// page or an unknown kind, an element that runs off its page, a page
// reached twice (a cycle, which sends bbolt's cursors, and its own
// consistency check, round for ever), a tree deeper than any bbolt builds.
// Only a tree that passes is safe to hand to bbolt's cursors as a whole.
//
// It reads the file in windows of 256 KiB, one per level of the tree,
// so that siblings, which bbolt mostly writes side by side, come from one
// read: a walk of 31,000 pages (135 MB) takes about 30 ms, and the process
// keeps a window a level (a mapping of the file would have made every page
// it touched resident). Its memory is that and one bit per page of the
// file (the meta page's page count, which the caller has held against the
// file's size) for the pages seen.
func checkTree(f *os.File, m boltMeta) []string {
	w := &treeCheck{f: f, size: int64(m.hw) * int64(m.pageSize), m: m, seen: make([]uint64, (m.hw+63)/64)}
	w.tree(m.root, 0)
	return w.problems
}

// firstProblem is damage named by where (when not "") and the first of
// problems (at least one), with a count of the rest.
func firstProblem(where string, problems []string) error {
	more := ""
	if len(problems) > 1 {
		more = fmt.Sprintf(", and %d more (tapedeck verify lists them)", len(problems)-1)
	}
	if where != "" {
		where += ": "
	}
	return damaged("%s%s%s", where, problems[0], more)
}

// readWindow is how much of the file one read takes in.
const readWindow = 256 << 10

// window is a stretch of the file read in: the bytes from off on.
type window struct {
	off int64
	buf []byte
}

// maxTreeDepth bounds a B+tree's depth and the nesting of buckets: a
// page of 4 KiB holds at least two keys, so a real tree of a few
// terabytes is far shallower.
const maxTreeDepth = 64

type treeCheck struct {
	f        *os.File
	size     int64    // of the file's used pages
	windows  []window // one per level of the tree
	m        boltMeta
	seen     []uint64 // a bit per page of the file: reached already
	problems []string
}

func (w *treeCheck) reached(id uint64) bool { return w.seen[id/64]&(1<<(id%64)) != 0 }
func (w *treeCheck) reach(id uint64)        { w.seen[id/64] |= 1 << (id % 64) }

// read returns n bytes of the file from off, for a page at depth: from
// the depth's window, or read into it. What it returns stays valid until
// the next read at the same depth.
func (w *treeCheck) read(depth int, off, n int64) ([]byte, error) {
	for len(w.windows) <= depth {
		w.windows = append(w.windows, window{})
	}
	win := &w.windows[depth]
	if off >= win.off && off+n <= win.off+int64(len(win.buf)) {
		return win.buf[off-win.off : off-win.off+n], nil
	}
	end := min(off+max(n, readWindow), w.size)
	if end < off+n {
		return nil, fmt.Errorf("%d bytes at %d run past the file's used %d", n, off, w.size)
	}
	if int64(cap(win.buf)) < end-off {
		win.buf = make([]byte, end-off)
	}
	win.off, win.buf = off, win.buf[:end-off]
	if _, err := w.f.ReadAt(win.buf, off); err != nil {
		win.buf = win.buf[:0]
		return nil, err
	}
	return win.buf[:n], nil
}

func (w *treeCheck) problem(format string, args ...any) {
	if len(w.problems) < maxProblemsPerCheck {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// maxProblemsPerCheck bounds what one damaged tree reports.
const maxProblemsPerCheck = 100

// tree checks the tree whose root is the page id.
func (w *treeCheck) tree(id uint64, depth int) {
	if depth > maxTreeDepth {
		w.problem("page %d: deeper than %d levels", id, maxTreeDepth)
		return
	}
	if id < 2 || id >= w.m.hw {
		w.problem("page %d: referenced, but outside the file's %d pages", id, w.m.hw)
		return
	}
	if w.reached(id) {
		w.problem("page %d: referenced twice (a cycle, or two parents)", id)
		return
	}
	ps := int64(w.m.pageSize)
	hdr, err := w.read(depth, int64(id)*ps, pageHeaderSize)
	if err != nil {
		w.problem("page %d: %v", id, err)
		return
	}
	le := binary.LittleEndian
	overflow := uint64(le.Uint32(hdr[12:]))
	if got := le.Uint64(hdr); got != id {
		w.problem("page %d: its header says page %d", id, got)
		return
	}
	if id+overflow >= w.m.hw {
		w.problem("page %d: %d overflow pages run past the file's %d pages", id, overflow, w.m.hw)
		return
	}
	for i := range overflow + 1 {
		if i > 0 && w.reached(id+i) {
			w.problem("page %d: its overflow page %d is reached from elsewhere too", id, id+i)
			return
		}
		w.reach(id + i)
	}
	p, err := w.read(depth, int64(id)*ps, int64(overflow+1)*ps)
	if err != nil {
		w.problem("page %d: %v", id, err)
		return
	}
	w.page(id, p, depth)
}

// page checks the elements of the page p (id, or 0 for an inline page).
func (w *treeCheck) page(id uint64, p []byte, depth int) {
	le := binary.LittleEndian
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	switch {
	case flags != branchPage && flags != leafPage:
		// bbolt's cursor takes anything but a leaf for a branch and
		// follows page ids read from wherever its elements would be.
		w.problem("page %d: kind %#x is neither branch nor leaf", id, flags)
		return
	case flags == branchPage && count == 0:
		w.problem("page %d: a branch with no elements", id)
		return
	case pageHeaderSize+count*16 > len(p):
		w.problem("page %d: %d elements do not fit in it", id, count)
		return
	}
	for i := range count {
		e := pageHeaderSize + i*16
		switch flags {
		case branchPage:
			pos, ksize, child := int(le.Uint32(p[e:])), int(le.Uint32(p[e+4:])), le.Uint64(p[e+8:])
			if e+pos+ksize > len(p) {
				w.problem("page %d: branch element %d runs off the page", id, i)
				return
			}
			w.tree(child, depth+1)
		case leafPage:
			eflags, pos, ksize, vsize := le.Uint32(p[e:]), int(le.Uint32(p[e+4:])), int(le.Uint32(p[e+8:])), int(le.Uint32(p[e+12:]))
			end := e + pos + ksize + vsize
			if pos < 0 || end > len(p) || end < e {
				w.problem("page %d: leaf element %d runs off the page", id, i)
				return
			}
			if eflags&1 == 0 { // a key and its value
				continue
			}
			v := p[e+pos+ksize : end]
			if len(v) < 16 {
				w.problem("page %d: bucket %d: its header is cut", id, i)
				continue
			}
			if root := le.Uint64(v); root != 0 {
				w.tree(root, depth+1)
				continue
			}
			if len(v) < 16+pageHeaderSize {
				w.problem("page %d: inline bucket %d: its page is cut", id, i)
				continue
			}
			if depth >= maxTreeDepth {
				w.problem("page %d: buckets nest deeper than %d", id, maxTreeDepth)
				continue
			}
			w.page(0, v[16:], depth+1)
		}
	}
}

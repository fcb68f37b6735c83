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
func checkTree(f *os.File, m boltMeta) []string {
	w := &treeCheck{f: f, m: m, seen: map[uint64]bool{}}
	w.tree(m.root, 0)
	return w.problems
}

// maxTreeDepth bounds a B+tree's depth and the nesting of buckets: a
// page of 4 KiB holds at least two keys, so a real tree of a few
// terabytes is far shallower.
const maxTreeDepth = 64

type treeCheck struct {
	f        *os.File
	m        boltMeta
	seen     map[uint64]bool
	problems []string
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
	if w.seen[id] {
		w.problem("page %d: referenced twice (a cycle, or two parents)", id)
		return
	}
	ps := int64(w.m.pageSize)
	hdr := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(hdr, int64(id)*ps); err != nil {
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
		w.seen[id+i] = true
	}
	p := make([]byte, int64(overflow+1)*ps)
	if _, err := w.f.ReadAt(p, int64(id)*ps); err != nil {
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

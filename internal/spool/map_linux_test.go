package spool

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestWindowFaultedInAStepAtATime: a window that a short record went into
// is resident only as far as its first populate step (a process that then
// writes long lines, which bypass the mapping, pays that much memory, not
// the window), and copies that move on through the window fault the rest
// in ahead of them; every record reads back.
func TestWindowFaultedInAStepAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	w, err := Create(path, []byte(`{"id":"01window"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := append(bytes.Repeat([]byte("x"), 999), '\n')
	w.AddLines(StreamOut, 1, 0, line)
	if _, err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.m.mem == nil {
		t.Skip("no mapping: the file system cannot pre-allocate")
	}
	<-w.m.populated
	if rss := mappedRSS(t, w.m.mem); rss > populateStep {
		t.Fatalf("after one short record the window holds %d resident bytes, more than a step (%d)", rss, populateStep)
	}
	seq := uint64(2)
	for w.End()-w.m.start < window-16<<10 {
		w.AddLines(StreamOut, seq, int64(seq), line)
		if _, err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	if w.m.populatedTo < w.m.start+window/2 {
		t.Fatalf("copies reached %d bytes into the window, pages are faulted in only to %d", w.End()-w.m.start, w.m.populatedTo-w.m.start)
	}
	if err := w.AppendEnd([]byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	f, r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := uint64(0)
	for {
		typ, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if typ == TypeLines {
			lines++
		}
	}
	if lines != seq-1 {
		t.Fatalf("read back %d lines records of %d", lines, seq-1)
	}
}

// mappedRSS is the resident size of the mapping that starts at mem[0], from
// /proc/self/smaps.
func mappedRSS(t *testing.T, mem []byte) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&mem[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, start) {
			in = true
			continue
		}
		if rest, ok := strings.CutPrefix(l, "Rss:"); ok && in {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("the mapping is not in /proc/self/smaps")
	return 0
}

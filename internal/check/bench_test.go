package check

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// deepTree is a ui/setPanel request whose tree nests depth columns, each
// holding the next and a text: a hostile plugin's UI tree.
func deepTree(id, depth int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ui/setPanel","params":{"tree":`, id)
	for range depth {
		b.WriteString(`{"type":"column","children":[{"type":"text","text":"x"},`)
	}
	b.WriteString(`{"type":"text","text":"leaf"}`)
	for range depth {
		b.WriteString(`]}`)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// BenchmarkDeepTrees checks a session of UI trees 4,990 levels deep, about
// 3 MB in all (the audit's case; 5.8 s and 709 MB before the tree walk
// was made linear). One op is the whole session.
func BenchmarkDeepTrees(b *testing.B) {
	const depth = 4990
	var frames []frame.Frame
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"apiVersion":4,"plugin":{"id":"deep"}}}`)
	frames = append(frames, frame.Frame{Seq: 1, Dir: frame.In, Raw: init})
	size := 0
	for i := 1; size < 3<<20; i++ {
		raw := deepTree(i, depth)
		size += len(raw)
		frames = append(frames, frame.Frame{Seq: uint64(i + 1), At: int64(i) * 1e9, Dir: frame.Out, Raw: raw})
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		c := New(Options{APIVersion: 4})
		for i := range frames {
			c.Feed(&frames[i])
		}
		c.Finish()
	}
}

// TestDeepTreeIsLinear: one UI tree 4,990 levels deep used to cost about
// 1.3 GB of allocations (every element's path spelled in full, and the
// schema validated to the bottom); now the walk keeps the path as a stack
// and the schema stops at a depth the host rejects anyway.
func TestDeepTreeIsLinear(t *testing.T) {
	raw := deepTree(1, 4990)
	c := New(Options{APIVersion: 4})
	f := frame.Frame{Seq: 1, Dir: frame.Out, Raw: raw}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	found := c.Feed(&f)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("checking a %d-byte tree allocated %d MB", len(raw), n>>20)
	}
	deep := false
	for _, fd := range found {
		deep = deep || fd.Rule == RuleUITooDeep
		if fd.Rule == RuleUITooDeep && !strings.HasPrefix(fd.Path, "params.tree.children[1].children[1]") {
			t.Errorf("ui-too-deep at %q", fd.Path)
		}
	}
	if !deep {
		t.Errorf("findings %+v: want ui-too-deep", found)
	}
}

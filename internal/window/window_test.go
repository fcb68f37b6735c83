package window

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/wire"
)

// TestKeeperKeepsTheFirstLines: lines are kept until the frames or bytes
// of the bound would be passed; from then on none is, each counted; a
// line read in part is kept cut and its rest counted.
func TestKeeperKeepsTheFirstLines(t *testing.T) {
	type take struct {
		n      int64
		stored int
		want   bool
	}
	for _, c := range []struct {
		name  string
		bound Bound
		takes []take
		want  Unkept
	}{
		{"frames", Bound{Frames: 2, Bytes: 100, Line: 10}, []take{{3, 3, true}, {4, 4, true}, {5, 5, false}, {1, 1, false}},
			Unkept{Frames: 2, Bytes: 6, KeptFrames: 2, KeptBytes: 7}},
		{"bytes", Bound{Frames: 10, Bytes: 8, Line: 10}, []take{{5, 5, true}, {4, 4, false}, {1, 1, false}},
			Unkept{Frames: 2, Bytes: 5, KeptFrames: 1, KeptBytes: 5}},
		{"cut", Bound{Frames: 10, Bytes: 100, Line: 10}, []take{{50, 10, true}, {2, 2, true}},
			Unkept{Bytes: 40, Cut: 1, CutAt: 10}},
		{"nothing", Bound{}, []take{{1, 1, false}}, Unkept{Frames: 1, Bytes: 1}},
	} {
		k := &Keeper{Bound: c.bound}
		for i, tk := range c.takes {
			if got := k.Take(tk.n, tk.stored); got != tk.want {
				t.Errorf("%s: Take #%d (%d, %d) = %v, want %v", c.name, i+1, tk.n, tk.stored, got, tk.want)
			}
		}
		if got := k.Count(); got != c.want {
			t.Errorf("%s: Count() = %+v, want %+v", c.name, got, c.want)
		}
		if k.Full() != (c.want.Frames > 0) {
			t.Errorf("%s: Full() = %v", c.name, k.Full())
		}
	}
}

// TestSplitterHoldsAtMostTheCap: one line without end, fed a chunk at a
// time, is held to the cap (the splitter's buffer never grows past it),
// and at its end is handed on cut, with its whole length.
func TestSplitterHoldsAtMostTheCap(t *testing.T) {
	const lineCap = 1 << 16
	s := &Splitter{Keep: &Keeper{Bound: Bound{Frames: 10, Bytes: 1 << 20, Line: lineCap}}, Scan: wire.NewScanner(wire.Lines), Stable: true}
	var got []Line
	emit := func(l Line) { got = append(got, l) }
	chunk := bytes.Repeat([]byte("a"), 4096)
	for range 1024 { // 4 MiB
		s.Feed(chunk, emit)
		if cap(s.acc) > 2*lineCap {
			t.Fatalf("the splitter holds %d bytes of a line capped at %d", cap(s.acc), lineCap)
		}
	}
	s.Feed([]byte("\nnext\n"), emit)
	if len(got) != 2 {
		t.Fatalf("%d lines, want 2", len(got))
	}
	if l := got[0]; len(l.Raw) != lineCap || l.Cut == nil || l.Cut.Len != 4<<20 || !l.EOL || l.Unkept {
		t.Errorf("the long line: %d bytes kept, cut %+v, eol %v, unkept %v", len(l.Raw), l.Cut, l.EOL, l.Unkept)
	}
	if string(got[1].Raw) != "next" || got[1].Cut != nil {
		t.Errorf("the next line: %q, cut %+v", got[1].Raw, got[1].Cut)
	}
}

// FuzzSplitter: whatever the input and however it is fed, the lines
// handed on are the input's (with a cap and bound that hold them all),
// and with a small cap each is at most the cap and says its length.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("one\ntwo\n"), uint8(3))
	f.Add([]byte("no end"), uint8(1))
	f.Add([]byte("\n\n\nlong line here\nx"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		n := int(step)%7 + 1
		for _, lineCap := range []int{1 << 20, 4} {
			s := &Splitter{Keep: &Keeper{Bound: Bound{Frames: 1 << 20, Bytes: 1 << 30, Line: lineCap}}, Scan: wire.NewScanner(wire.Lines)}
			var lines []string
			emit := func(l Line) {
				length := int64(len(l.Raw))
				if l.Cut != nil {
					length = l.Cut.Len
				}
				if len(l.Raw) > lineCap || (l.Cut != nil && l.Cut.Len <= int64(len(l.Raw))) {
					t.Fatalf("cap %d: a line of %d bytes kept, cut %+v", lineCap, len(l.Raw), l.Cut)
				}
				lines = append(lines, string(l.Raw)+"|"+strings.Repeat(".", int(length-int64(len(l.Raw)))))
			}
			for i := 0; i < len(in); i += n {
				s.Feed(in[i:min(i+n, len(in))], emit)
			}
			s.End(emit)
			var want []string
			rest := string(in)
			for rest != "" {
				line, after, ok := strings.Cut(rest, "\n")
				kept := line[:min(len(line), lineCap)]
				want = append(want, kept+"|"+strings.Repeat(".", len(line)-len(kept)))
				rest = after
				if !ok {
					break
				}
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Fatalf("cap %d, fed %d at a time: lines\n%q\nwant\n%q", lineCap, n, lines, want)
			}
		}
	})
}

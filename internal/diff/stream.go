package diff

// How a comparison reads two timelines as streams: each side's frames
// come one at a time, and only a window of compared frames of each side
// is held. The window is aligned as a whole would be (see script); what
// lies before the last equal run in its first half is classified and let
// go, and the rest is aligned again with the frames that follow. A gap
// wider than half a window (no frame of its first half the same on both
// sides) is let go half a window at a time. What a whole alignment would
// make of a timeline that fits in one window, a window makes of it too.

import (
	"hash/maphash"
	"iter"
	"strconv"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// Timeline is one side of a comparison: its frames in order, from its
// start on each call (a comparison reads it once, and once more for
// stderr when it compares stderr). A frame is the comparison's only while
// yield runs: it keeps a copy of what it holds.
type Timeline = iter.Seq[*frame.Frame]

// Slice is the Timeline of frames held in memory.
func Slice(frames []frame.Frame) Timeline {
	return func(yield func(*frame.Frame) bool) {
		for i := range frames {
			if !yield(&frames[i]) {
				return
			}
		}
	}
}

// Window is how many compared frames of each side a comparison holds at
// once (and at most windowBytes of them), beyond those it reads ahead on
// the recorded side to name a live request by the recorded one it stands
// for (at most lookAhead, and lookAheadBytes).
const Window = 1 << 14

// lookAhead is how many compared frames past its window the recorded side
// is read to find the recorded request a live one stands for.
const lookAhead = 4 * Window

// windowBytes and lookAheadBytes bound the same in bytes held (a frame's
// line and what its item names): a window of long lines (a language
// server's didOpen of a big file) holds fewer frames. A window holds at
// least one frame, however long.
const (
	windowBytes    = 8 << 20
	lookAheadBytes = windowBytes
)

// wholeWindow is a window no timeline fills: the whole of each.
const wholeWindow = 1 << 40

// Stream compares the plugin's side of two timelines (recorded, live), as
// Frames does, holding about Window compared frames of each side at once
// whatever their length, and the differences found.
func Stream(recorded, live Timeline, opts Options) Result {
	return compare(recorded, live, opts, Window, nil, false)
}

// compare is Stream with a window of window frames, or, with whole set,
// the two sides read whole and aligned and classified by whole. held says
// that the timelines' frames are held by the caller, unchanged, for as
// long as the Result lives (Frames'): an item then holds its frame, not a
// copy.
func compare(recorded, live Timeline, opts Options, window int, whole func(c *comparison, a, b []item) []Difference, held bool) Result {
	names := opts.Names
	if names[0] == "" || names[1] == "" {
		names = [2]string{"recorded", "replayed"}
	}
	c := &comparison{opts: opts, names: names, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, classes: map[class]*class{}, byKind: map[message.Kind]map[string]*class{}, held: held}
	if whole != nil {
		window = wholeWindow
	}
	res := Result{Names: names}
	out, a, b := c.stream(recorded, live, false, window, whole)
	res.Differences = out
	res.Compared = [2]int{int(a.norm.n), int(b.norm.n)}
	if opts.CompareStderr {
		errs, ea, eb := c.stream(recorded, live, true, window, whole)
		res.Differences = append(res.Differences, errs...)
		res.Compared[0] += int(ea.norm.n)
		res.Compared[1] += int(eb.norm.n)
	}
	if d, ok := compareExit(a.norm.exit, b.norm.exit); ok {
		res.Differences = append(res.Differences, d)
	}
	res.More = c.more
	return res
}

// source is one timeline as a comparison reads it: the items of its
// window not yet classified.
type source struct {
	next  func() (*frame.Frame, bool)
	stop  func()
	norm  *normaliser
	items []item
	bytes int  // what items hold (see cost)
	done  bool // the timeline has ended
	// gone is called with the items let go, before they are.
	gone func([]item)
}

// cost is what an item holds, as windowBytes counts it: its line, its id
// and its class's names (shared by many items, except in a stream that
// names a method of its own in each line).
func cost(it *item) int {
	return len(it.f.Raw) + len(it.id) + len(it.cls.align) + len(it.cls.what) + len(it.cls.method) + 64
}

func (c *comparison) open(tl Timeline, stderr bool, requestID func(*frame.Frame, string) string) *source {
	next, stop := iter.Pull(tl)
	return &source{next: next, stop: stop, norm: c.normaliser(stderr, requestID)}
}

// read reads the side's next compared frame into its window; false at the
// timeline's end.
func (s *source) read() bool {
	for !s.done {
		f, ok := s.next()
		if !ok {
			s.done = true
			s.stop()
			return false
		}
		if it, ok := s.norm.add(f); ok {
			s.items = append(s.items, it)
			s.bytes += cost(&it)
			return true
		}
	}
	return false
}

// fill reads until the window holds n items or maxBytes, or the timeline
// ends.
func (s *source) fill(n, maxBytes int) {
	for len(s.items) < n && s.bytes < maxBytes && s.read() {
	}
}

// let goes of the window's first n items.
func (s *source) let(n int) {
	if s.gone != nil {
		s.gone(s.items[:n])
	}
	for i := range s.items[:n] {
		s.bytes -= cost(&s.items[i])
	}
	k := copy(s.items, s.items[n:])
	clear(s.items[k:])
	s.items = s.items[:k]
}

// stream compares one stream (stdout, or stderr) of the two timelines.
func (c *comparison) stream(recorded, live Timeline, stderr bool, window int, whole func(c *comparison, a, b []item) []Difference) (out []Difference, a, b *source) {
	ids := &requestIDs{name: c.names[0], bySeq: map[uint64]string{}, seqs: map[string][]uint64{}}
	a = c.open(recorded, stderr, ids.recorded)
	defer a.stop()
	maxBytes := windowBytes
	if whole != nil || window >= wholeWindow {
		maxBytes = wholeWindow
	}
	ids.more = func() bool {
		return len(a.items) < window+lookAhead && a.bytes < maxBytes+lookAheadBytes && a.read()
	}
	a.gone = ids.gone
	b = c.open(live, stderr, ids.live(c.opts.Pair))
	defer b.stop()
	if whole != nil {
		a.fill(window, maxBytes)
		b.fill(window, maxBytes)
		return whole(c, a.items, b.items), a, b
	}
	for {
		a.fill(window, maxBytes)
		b.fill(window, maxBytes)
		if len(a.items) == 0 && len(b.items) == 0 {
			break
		}
		edits := c.edits(a.items, b.items, alignBudget)
		ca, cb, cut := len(a.items), len(b.items), edits
		if !a.done || !b.done {
			ca, cb, cut = commitPoint(edits, limit(a), limit(b))
		}
		out = append(out, c.differences(a.items[:ca], b.items[:cb], cut)...)
		a.let(ca)
		b.let(cb)
	}
	return detectMoves(out), a, b
}

// counted reports whether the comparison keeps no more differences
// (MaxKept, MaxKeptBytes), and then counts one.
func (c *comparison) counted() bool {
	if c.kept < MaxKept && c.keptBytes < MaxKeptBytes {
		return false
	}
	c.more++
	return true
}

// keep appends d to out when the comparison has room for it (the first
// difference always), else counts it.
func (c *comparison) keep(out []Difference, d Difference) []Difference {
	size := d.size()
	if c.kept > 0 && c.keptBytes+size > MaxKeptBytes {
		c.more++
		return out
	}
	c.kept, c.keptBytes = c.kept+1, c.keptBytes+size
	return append(out, d)
}

// limit is how much of a side's window may be classified now: all of it
// once the timeline has ended, else its first half (the rest is aligned
// again with what follows).
func limit(s *source) int {
	if s.done {
		return len(s.items)
	}
	return max(len(s.items)/2, min(len(s.items), 1))
}

// commitPoint is how much of the two windows edits aligns to be
// classified now: up to the furthest point of an equal run within la
// items of a and lb of b, and the edits up to it. Without such a point
// past the start (a gap wider than the limits), the first la and lb items
// are taken as one gap.
func commitPoint(edits []edit, la, lb int) (ca, cb int, cut []edit) {
	i, j := 0, 0
	for k, e := range edits {
		if e.op == opEqual {
			n := min(e.n, la-i, lb-j)
			if n > 0 {
				ca, cb = i+n, j+n
				cut = append(edits[:k:k], edit{opEqual, n})
			}
			if n < e.n {
				break
			}
		}
		switch e.op {
		case opEqual:
			i, j = i+e.n, j+e.n
		case opDelete:
			i += e.n
		case opInsert:
			j += e.n
		}
		if i > la || j > lb {
			break
		}
	}
	if ca > 0 || cb > 0 {
		return ca, cb, cut
	}
	return la, lb, []edit{{opDelete, la}, {opInsert, lb}}
}

// requestIDs gives plugin requests the ids they compare with: a recorded
// request its seq ("recorded seq 4"), a live one the id of the recorded
// request it stands for, or "new request N" when it stands for none. It
// holds the recorded requests of the window and its look-ahead not taken
// yet: one let go of the window untaken is forgotten (it was classified
// without a live request), so what it holds is bounded by the window.
type requestIDs struct {
	name  string              // the recorded side's name
	bySeq map[uint64]string   // recorded request seq → its id, until a live one takes it or it is let go
	seqs  map[string][]uint64 // recorded request seqs by method, in order, until taken by order or let go
	extra int
	// more reads one more compared frame of the recorded side, while its
	// window holds fewer than lookAhead past its size; false when it does
	// not.
	more func() bool
}

func (r *requestIDs) recorded(f *frame.Frame, method string) string {
	id := r.name + " seq " + strconv.FormatUint(f.Seq, 10)
	r.bySeq[f.Seq] = id
	r.seqs[method] = append(r.seqs[method], f.Seq)
	return id
}

// gone forgets the recorded requests among items, which the window lets
// go: those a live request took are forgotten already.
func (r *requestIDs) gone(items []item) {
	for i := range items {
		it := &items[i]
		if _, ok := r.bySeq[it.f.Seq]; !ok || it.id != r.bySeq[it.f.Seq] {
			continue
		}
		delete(r.bySeq, it.f.Seq)
		method := it.cls.method
		q := r.seqs[method]
		for len(q) > 0 && q[0] <= it.f.Seq {
			q = q[1:]
		}
		r.take(method, q)
	}
}

// take sets the recorded requests of method not yet taken by order to q.
func (r *requestIDs) take(method string, q []uint64) {
	if len(q) == 0 {
		delete(r.seqs, method)
		return
	}
	r.seqs[method] = q
}

// readTo reads the recorded side until ok holds or it can read no more
// (its end, or lookAhead past its window).
func (r *requestIDs) readTo(ok func() bool) {
	for !ok() && r.more() {
	}
}

func (r *requestIDs) live(pair func(uint64) (uint64, bool)) func(*frame.Frame, string) string {
	return func(f *frame.Frame, method string) string {
		if pair != nil {
			if seq, ok := pair(f.Seq); ok {
				r.readTo(func() bool { _, ok := r.bySeq[seq]; return ok })
				if id, ok := r.bySeq[seq]; ok {
					delete(r.bySeq, seq)
					return id
				}
			}
		} else {
			r.readTo(func() bool { return len(r.seqs[method]) > 0 })
			if q := r.seqs[method]; len(q) > 0 {
				r.take(method, q[1:])
				if id, ok := r.bySeq[q[0]]; ok {
					delete(r.bySeq, q[0])
					return id
				}
			}
		}
		r.extra++
		return "new request " + strconv.Itoa(r.extra)
	}
}

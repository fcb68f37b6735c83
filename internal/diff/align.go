package diff

// How the two sequences of compared frames are aligned: which frames are
// the same on both sides (equal), and what lies between them (deleted from
// the recording, inserted in the replay), in work near linear in their
// length whatever they hold.
//
// The alignment has always been go-diff's Myers diff over one rune per
// distinct content, and it stays that wherever its work is bounded: the
// walk costs about D² + N steps for N frames and D edits, so a replay that
// says most of what was recorded is aligned as before, to the frame. What
// it cannot afford is many edits over many frames (80,000 frames that all
// differ took 31 s to align, 41 s to compare): there, frames whose content occurs once on each side
// anchor the alignment (the longest run of them in the same order on both
// sides), and the gaps between anchors are aligned again, each by go-diff
// while a shared budget lasts, else by anchors of their own.

import (
	"math"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// alignBudget is the work, in steps of Myers's walk (a diagonal tried or a
// frame matched), that exact alignments may take in one comparison: some
// 8,000 edits, about 0.1 s of walking and 0.2 to 0.3 s of go-diff's own.
// Past it a gap is anchored.
const alignBudget = 1 << 25

// maxAnchorDepth is how many times a gap is split at anchors inside a gap
// before what is left of it is taken as deleted and inserted whole: each
// level costs one pass over the frames.
const maxAnchorDepth = 32

// Edit operations: frames the same on both sides, only in a (deleted),
// only in b (inserted).
const (
	opEqual byte = iota
	opDelete
	opInsert
)

// edit is n frames of one operation.
type edit struct {
	op byte
	n  int
}

// aligner aligns sequences of content ids (0 ≤ id < distinct): counts and
// positions by id for one gap at a time, and the budget left.
type aligner struct {
	budget   int
	distinct int
	cntA     []int32 // occurrences of each id in the gap's a
	cntB     []int32
	posB     []int32 // where an id that occurs once is in the gap's b
	touched  []int32 // ids whose counts are set
	v        []int   // Myers's furthest x by diagonal
	runes    []rune  // a gap's id as a rune for go-diff, 0 for none yet
}

// script is the edits that turn a into b, ids of distinct contents;
// budget is the work exact alignments may take: the whole's, and then
// as much again for its gaps together (0: anchors only).
func script(a, b []int32, distinct, budget int) []edit {
	al := &aligner{budget: budget, distinct: distinct}
	p := commonPrefix(a, b)
	s := commonSuffix(a[p:], b[p:])
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	whole := func(id int32) rune { return runeOf(int(id)) }
	if len(ma) == 0 || len(mb) == 0 {
		// go-diff answers at once (and may slide the edit over an equal
		// neighbour, as it did).
		if distinct < maxDistinct {
			return goDiff(a, b, whole)
		}
		return appendEdits(nil, edit{opEqual, p}, edit{opDelete, len(ma)}, edit{opInsert, len(mb)}, edit{opEqual, s})
	}
	common := al.count(ma, mb)
	if common == 0 {
		// Nothing in common: what go-diff answers after its whole walk.
		al.reset()
		return appendEdits(nil, edit{opEqual, p}, edit{opDelete, len(ma)}, edit{opInsert, len(mb)}, edit{opEqual, s})
	}
	if distinct < maxDistinct && al.fits(ma, mb, common) {
		al.reset()
		return goDiff(a, b, whole)
	}
	al.budget = budget
	out := appendEdits(nil, edit{opEqual, p})
	out = al.split(out, ma, mb, 0)
	return appendEdits(out, edit{opEqual, s})
}

// scriptOf is the script of two lists of pieces of text (lines, words),
// with a budget for its exact alignment that grows with their number (a
// frame has many such lists: together they cost their size).
func scriptOf(a, b []string) []edit {
	ids := map[string]int32{}
	toIDs := func(pieces []string) []int32 {
		out := make([]int32, len(pieces))
		for i, p := range pieces {
			id, ok := ids[p]
			if !ok {
				id = int32(len(ids))
				ids[p] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := toIDs(a), toIDs(b)
	return script(ia, ib, len(ids), min(alignBudget, pieceBudget+pieceBudgetEach*(len(a)+len(b))))
}

// pieceBudget and pieceBudgetEach are the budget of scriptOf: a line or
// word diff of up to some 360 edits is go-diff's, of more when it is
// longer (1,200 in 10,000 lines).
const (
	pieceBudget     = 1 << 16
	pieceBudgetEach = 64
)

// gap appends the edits of a gap between anchors.
func (al *aligner) gap(out []edit, a, b []int32, depth int) []edit {
	p := commonPrefix(a, b)
	s := commonSuffix(a[p:], b[p:])
	out = appendEdits(out, edit{opEqual, p})
	a, b = a[p:len(a)-s], b[p:len(b)-s]
	common := 0
	if len(a) > 0 && len(b) > 0 {
		common = al.count(a, b)
	}
	switch {
	case common == 0 || depth >= maxAnchorDepth:
		al.reset()
		out = appendEdits(out, edit{opDelete, len(a)}, edit{opInsert, len(b)})
	case len(a)+len(b) < maxDistinct && al.fits(a, b, common):
		al.reset()
		out = al.goDiffGap(out, a, b)
	default:
		out = al.split(out, a, b, depth)
	}
	return appendEdits(out, edit{opEqual, s})
}

// split appends the edits of a and b, whose ids are counted, split at
// anchors: the gaps between them aligned each as a whole.
func (al *aligner) split(out []edit, a, b []int32, depth int) []edit {
	anchors := al.anchors(a, b)
	al.reset()
	i, j := 0, 0
	for _, x := range anchors {
		out = al.gap(out, a[i:x.i], b[j:x.j], depth+1)
		out = appendEdits(out, edit{opEqual, 1})
		i, j = x.i+1, x.j+1
	}
	return al.gap(out, a[i:], b[j:], depth+1)
}

// count counts the ids of a and b and returns how many frames the two
// could have in common at most (the sum over ids of the smaller count).
// reset clears the counts.
func (al *aligner) count(a, b []int32) int {
	if al.cntA == nil {
		al.cntA = make([]int32, al.distinct)
		al.cntB = make([]int32, al.distinct)
	}
	for _, id := range a {
		if al.cntA[id] == 0 && al.cntB[id] == 0 {
			al.touched = append(al.touched, id)
		}
		al.cntA[id]++
	}
	for _, id := range b {
		if al.cntA[id] == 0 && al.cntB[id] == 0 {
			al.touched = append(al.touched, id)
		}
		al.cntB[id]++
	}
	common := 0
	for _, id := range al.touched {
		common += int(min(al.cntA[id], al.cntB[id]))
	}
	return common
}

func (al *aligner) reset() {
	for _, id := range al.touched {
		al.cntA[id], al.cntB[id] = 0, 0
	}
	al.touched = al.touched[:0]
}

// fits walks a and b as Myers's algorithm does, within the budget left,
// and reports whether it reached their end: then go-diff's own walk, the
// same work in two halves, is affordable. The work is taken off the
// budget either way. common bounds the walk from below: at least
// len(a)+len(b)-2·common edits, so at least half their square in steps.
func (al *aligner) fits(a, b []int32, common int) bool {
	dmin := len(a) + len(b) - 2*common
	if dmin > 0 && float64(dmin)*float64(dmin)/2 > float64(al.budget) {
		return false
	}
	work, ok := al.walk(a, b, al.budget)
	al.budget = max(0, al.budget-work)
	return ok
}

// walk is the forward half of Myers's O(ND) algorithm, for the work it
// takes: it reports whether it reached the end of a and b before taking
// more than limit steps.
func (al *aligner) walk(a, b []int32, limit int) (work int, ok bool) {
	n, m := len(a), len(b)
	// d edits take at least (d+1)(d+2)/2 steps: the walk never needs more.
	dmax := min(n+m, int(math.Sqrt(2*float64(limit)))+2)
	size := 2*dmax + 3
	if cap(al.v) < size {
		al.v = make([]int, size)
	}
	v := al.v[:size]
	off := dmax + 1
	v[off+1] = 0
	for d := 0; d <= dmax; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			x0 := x
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			work += 1 + x - x0
			v[off+k] = x
			if k == n-m && x >= n {
				return work, true
			}
		}
		if work > limit {
			return work, false
		}
	}
	return work, false
}

// anchor is a frame at a[i] that is the same as b[j].
type anchor struct{ i, j int }

// anchors picks frames of a and b to align as the same, in order on both
// sides: the longest run of contents that occur once in each, or if there
// are none, of each content's k-th occurrence in a paired with its k-th in
// b. It needs the counts of a and b.
func (al *aligner) anchors(a, b []int32) []anchor {
	var pairs []anchor
	if al.posB == nil {
		al.posB = make([]int32, al.distinct)
	}
	for j, id := range b {
		if al.cntA[id] == 1 && al.cntB[id] == 1 {
			al.posB[id] = int32(j)
		}
	}
	for i, id := range a {
		if al.cntA[id] == 1 && al.cntB[id] == 1 {
			pairs = append(pairs, anchor{i, int(al.posB[id])})
		}
	}
	if len(pairs) == 0 {
		// Each content's positions in b, in order, and how many of its
		// occurrences in a were paired.
		at := map[int32][]int32{}
		for j, id := range b {
			if al.cntA[id] > 0 {
				at[id] = append(at[id], int32(j))
			}
		}
		for i, id := range a {
			if js := at[id]; len(js) > 0 {
				pairs = append(pairs, anchor{i, int(js[0])})
				at[id] = js[1:]
			}
		}
	}
	return increasing(pairs)
}

// increasing returns the longest run of pairs (in order of i) whose j
// increase too, by patience sorting: of two as long, the one that ends
// with the later pair.
func increasing(pairs []anchor) []anchor {
	tails := make([]int, 0, 16) // tails[l]: the pair that ends the best run of l+1
	prev := make([]int, len(pairs))
	for p, x := range pairs {
		lo, hi := 0, len(tails)
		for lo < hi {
			mid := (lo + hi) / 2
			if pairs[tails[mid]].j < x.j {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		prev[p] = -1
		if lo > 0 {
			prev[p] = tails[lo-1]
		}
		if lo == len(tails) {
			tails = append(tails, p)
		} else {
			tails[lo] = p
		}
	}
	if len(tails) == 0 {
		return nil
	}
	out := make([]anchor, len(tails))
	for k, p := len(tails)-1, tails[len(tails)-1]; k >= 0; k, p = k-1, prev[p] {
		out[k] = pairs[p]
	}
	return out
}

// goDiffGap appends go-diff's edits for a gap, its ids numbered afresh so
// that each is a rune.
func (al *aligner) goDiffGap(out []edit, a, b []int32) []edit {
	if al.runes == nil {
		al.runes = make([]rune, al.distinct)
	}
	next := 0
	runeFor := func(id int32) rune {
		if al.runes[id] == 0 {
			al.runes[id] = runeOf(next)
			next++
			al.touched = append(al.touched, id)
		}
		return al.runes[id]
	}
	out = append(out, goDiff(a, b, runeFor)...)
	for _, id := range al.touched {
		al.runes[id] = 0
	}
	al.touched = al.touched[:0]
	return out
}

// goDiff is go-diff's alignment of a and b, each id spelled as a rune.
func goDiff(a, b []int32, runeFor func(int32) rune) []edit {
	toRunes := func(ids []int32) []rune {
		rs := make([]rune, len(ids))
		for i, id := range ids {
			rs[i] = runeFor(id)
		}
		return rs
	}
	ra := toRunes(a)
	rb := toRunes(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic: never a coarser diff under load
	var out []edit
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			out = appendEdits(out, edit{opEqual, n})
		case diffmatchpatch.DiffDelete:
			out = appendEdits(out, edit{opDelete, n})
		case diffmatchpatch.DiffInsert:
			out = appendEdits(out, edit{opInsert, n})
		}
	}
	return out
}

// appendEdits appends edits, leaving out empty ones and joining one to the
// last when they are the same operation.
func appendEdits(out []edit, es ...edit) []edit {
	for _, e := range es {
		if e.n == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].op == e.op {
			out[k].n += e.n
			continue
		}
		out = append(out, e)
	}
	return out
}

func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func commonSuffix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[len(a)-1-i] != b[len(b)-1-i] {
			return i
		}
	}
	return n
}

// runeOf maps an index to a rune go-diff keeps intact (no surrogates).
func runeOf(i int) rune {
	r := rune(i + 1)
	if r >= 0xD800 {
		r += 0x800
	}
	return r
}

// maxDistinct is how many distinct frames go-diff can tell apart.
const maxDistinct = 0x10FFFF - 0x800

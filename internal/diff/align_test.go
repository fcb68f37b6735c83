package diff

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// comparable is r without what differs between two comparisons of the
// same frames (the seeded sums that key moves).
func comparable(r Result) Result {
	r.Differences = slices.Clone(r.Differences)
	for i := range r.Differences {
		d := &r.Differences[i]
		for _, s := range []**Side{&d.Recorded, &d.Live} {
			if *s != nil {
				c := **s
				c.key = ""
				*s = &c
			}
		}
	}
	return r
}

// randomTimeline is n frames the plugin said, drawn from a few of each
// kind: notifications and requests of methods m0…m2 with a value 0…values-1,
// responses to the host's requests, stray lines, and (with stderr)
// stderr lines; the host's requests come first.
func randomTimeline(r *rand.Rand, n, values int, stderr bool) []frame.Frame {
	lines := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	for range n {
		v := r.IntN(values)
		switch k := r.IntN(10); {
		case k < 5:
			lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","method":"m%d","params":{"v":%d}}`, r.IntN(3), v))
		case k < 7:
			lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"m%d","params":{"v":%d}}`, 100+r.IntN(1000), r.IntN(2), v))
		case k < 8:
			lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"v":%d}}`, 1+r.IntN(2), v))
		case k < 9 && stderr:
			lines = append(lines, fmt.Sprintf(`! line %d`, v))
		default:
			lines = append(lines, fmt.Sprintf(`< not json %d`, v))
		}
	}
	return timeline(append(lines, "exit 0")...)
}

// TestAlignMatchesTheOracle: on random timelines of a few kinds of frames
// (small alphabets, where the former quadratic alignment is cheap and
// every kind of difference occurs), Frames gives the same result as the
// former alignment, difference for difference.
func TestAlignMatchesTheOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[Kind]int{}
	for i := range 3000 {
		values := 1 + r.IntN(4)
		stderr := i%2 == 0
		rec := randomTimeline(r, r.IntN(25), values, stderr)
		live := randomTimeline(r, r.IntN(25), values, stderr)
		if i%3 == 0 { // a replay that mostly says what was recorded
			live = slices.Clone(rec)
			for range 1 + r.IntN(4) {
				j := r.IntN(len(live))
				live[j] = randomTimeline(r, 1, values, stderr)[2]
			}
		}
		opts := Options{CompareStderr: stderr}
		got, want := comparable(Frames(rec, live, opts)), comparable(oracleFrames(rec, live, opts))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: Frames = %s, the former alignment %s\nrecorded %s\nlive %s", i, kinds2(got), kinds2(want), raws(rec), raws(live))
		}
		for _, d := range got.Differences {
			kinds[d.Kind]++
		}
	}
	for _, k := range []Kind{Changed, Missing, Extra, Moved} {
		if kinds[k] == 0 {
			t.Errorf("no %s difference in the cases: they test too little", k)
		}
	}
	t.Logf("differences compared: %v", kinds)
}

func kinds2(r Result) string {
	var s []string
	for _, d := range r.Differences {
		w := string(d.Kind) + " " + d.What
		if d.Recorded != nil {
			w += fmt.Sprintf(" rec#%d", d.Recorded.Index)
		}
		if d.Live != nil {
			w += fmt.Sprintf(" live#%d", d.Live.Index)
		}
		s = append(s, w)
	}
	return "[" + strings.Join(s, "; ") + "]"
}

func raws(fs []frame.Frame) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Dir.String()+" "+string(f.Raw))
	}
	return strings.Join(s, "\n  ")
}

// randomIDs is n ids below k.
func randomIDs(r *rand.Rand, n, k int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.IntN(k))
	}
	return out
}

// edited is a with random edits: some ids replaced by new ones (from
// next on), some removed, some inserted, and (when move) some moved.
func edited(r *rand.Rand, a []int32, next int32, edits int, move bool) []int32 {
	b := slices.Clone(a)
	for range edits {
		switch k := r.IntN(4); {
		case k == 0 && len(b) > 0:
			b[r.IntN(len(b))] = next
			next++
		case k == 1 && len(b) > 0:
			i := r.IntN(len(b))
			b = slices.Delete(b, i, i+1)
		case k == 2 && move && len(b) > 1:
			i := r.IntN(len(b))
			x := b[i]
			b = slices.Delete(b, i, i+1)
			b = slices.Insert(b, r.IntN(len(b)+1), x)
		default:
			b = slices.Insert(b, r.IntN(len(b)+1), next)
			next++
		}
	}
	return b
}

func distinctOf(a, b []int32) int {
	m := int32(-1)
	for _, id := range append(slices.Clone(a), b...) {
		m = max(m, id)
	}
	return int(m + 1)
}

// checkScript fails unless es turns a into b: every frame of each side
// once, and the frames it keeps equal the same on both sides.
func checkScript(t *testing.T, a, b []int32, es []edit) (equal int) {
	t.Helper()
	i, j := 0, 0
	for k, e := range es {
		if e.n <= 0 || (k > 0 && es[k-1].op == e.op) {
			t.Fatalf("edit %d of %v is empty or repeats the one before", k, es)
		}
		switch e.op {
		case opEqual:
			if i+e.n > len(a) || j+e.n > len(b) || !slices.Equal(a[i:i+e.n], b[j:j+e.n]) {
				t.Fatalf("edits %v keep frames that differ:\na %v\nb %v", es, a, b)
			}
			i, j, equal = i+e.n, j+e.n, equal+e.n
		case opDelete:
			i += e.n
		case opInsert:
			j += e.n
		}
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("edits %v cover %d of %d and %d of %d frames", es, i, len(a), j, len(b))
	}
	return equal
}

// TestScriptIsGoDiffWithinItsBudget: script gives go-diff's edits,
// exactly, whenever go-diff's walk fits the budget (every sequence of a
// few thousand frames) or the two have nothing in common, on random
// sequences over small alphabets and on edited copies.
func TestScriptIsGoDiffWithinItsBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(name string, a, b []int32) {
		t.Helper()
		got, want := script(a, b, distinctOf(a, b), alignBudget), oracleScript(a, b)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: script %v, go-diff %v\na %v\nb %v", name, got, want, a, b)
		}
	}
	for i := range 20000 {
		k := 1 + r.IntN(6)
		check(fmt.Sprint("small ", i), randomIDs(r, r.IntN(30), k), randomIDs(r, r.IntN(30), k))
	}
	for i := range 200 {
		a := randomIDs(r, r.IntN(3000), 1+r.IntN(50))
		check(fmt.Sprint("edited ", i), a, edited(r, a, 50, r.IntN(200), i%2 == 0))
		// Nothing in common, around a shared start and end.
		b := randomIDs(r, r.IntN(3000), 1+r.IntN(50))
		for j := range b {
			b[j] += 1000
		}
		pre, suf := a[:min(len(a), r.IntN(5))], a[len(a)-min(len(a), r.IntN(5)):]
		check(fmt.Sprint("disjoint ", i), slices.Concat(pre, a, suf), slices.Concat(pre, b, suf))
	}
}

// TestAnchoredScriptIsAnAlignment: past the budget (here none, or a few
// steps), script anchors: its edits are an alignment of the two whatever
// they hold; where the frames each occur once on a side and keep their
// order, it is go-diff's; where they also move, it keeps as many equal as
// go-diff (both the longest run in order); where they have nothing in
// common, it is go-diff's.
func TestAnchoredScriptIsAnAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	same, total := 0, 0
	for i := range 20000 {
		k := 1 + r.IntN(8)
		a, b := randomIDs(r, r.IntN(40), k), randomIDs(r, r.IntN(40), k)
		if i%2 == 0 {
			b = edited(r, a, int32(k), r.IntN(8), true)
		}
		want := oracleScript(a, b)
		for _, budget := range []int{0, 30} {
			got := script(a, b, distinctOf(a, b), budget)
			checkScript(t, a, b, got)
			if slices.Equal(got, want) {
				same++
			}
			total++
		}
	}
	t.Logf("anchored: %d of %d random alignments are go-diff's", same, total)

	unique := func(n int) []int32 {
		a := make([]int32, n)
		for i := range a {
			a[i] = int32(i)
		}
		return a
	}
	for range 3000 {
		n := r.IntN(300)
		a := unique(n)
		b := edited(r, a, int32(n), r.IntN(60), false)
		if got, want := script(a, b, distinctOf(a, b), 0), oracleScript(a, b); !slices.Equal(got, want) {
			t.Fatalf("in order: anchored %v, go-diff %v\na %v\nb %v", got, want, a, b)
		}
		b = edited(r, a, int32(n), r.IntN(60), true)
		got, want := script(a, b, distinctOf(a, b), 0), oracleScript(a, b)
		if g, w := checkScript(t, a, b, got), checkScript(t, a, b, want); g != w {
			t.Fatalf("moved: anchored keeps %d equal, go-diff %d\na %v\nb %v", g, w, a, b)
		}
		c := slices.Clone(b)
		for j := range c {
			c[j] += int32(2 * (n + 60))
		}
		if got, want := script(a, c, distinctOf(a, c), 0), oracleScript(a, c); !slices.Equal(got, want) {
			t.Fatalf("disjoint: anchored %v, go-diff %v", got, want)
		}
	}
}

// FuzzScript: for any two sequences over a few ids, script within its
// budget is go-diff's alignment, and anchored (no budget, or a little) it
// is an alignment.
func FuzzScript(f *testing.F) {
	f.Add([]byte("abcabba"), []byte("cbabac"), uint8(3))
	f.Add([]byte("aaaaaaaa"), []byte("aaaa"), uint8(1))
	f.Add([]byte("abcdefgh"), []byte("hgfedcba"), uint8(8))
	f.Add([]byte{}, []byte("xyz"), uint8(2))
	f.Fuzz(func(t *testing.T, x, y []byte, k uint8) {
		if len(x) > 500 || len(y) > 500 {
			return
		}
		n := int32(k%16) + 1
		toIDs := func(bs []byte) []int32 {
			out := make([]int32, len(bs))
			for i, c := range bs {
				out[i] = int32(c) % n
			}
			return out
		}
		a, b := toIDs(x), toIDs(y)
		if got, want := script(a, b, int(n), alignBudget), oracleScript(a, b); !slices.Equal(got, want) {
			t.Fatalf("script %v, go-diff %v\na %v\nb %v", got, want, a, b)
		}
		for _, budget := range []int{0, 20} {
			checkScript(t, a, b, script(a, b, int(n), budget))
		}
	})
}

// TestAnchoredMatchesTheOracleOnReplays: a replay that says what was
// recorded, some frames changed, missing or extra (each frame's content
// its own), is reported as the former alignment reports it, anchored
// (no budget) as well as exactly.
func TestAnchoredMatchesTheOracleOnReplays(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	line := func(method, n int) string {
		return fmt.Sprintf(`< {"jsonrpc":"2.0","method":"m%d","params":{"n":%d}}`, method, n)
	}
	for i := range 300 {
		var rec, live []string
		next := 0
		for range r.IntN(60) {
			l := line(r.IntN(3), next)
			next++
			rec = append(rec, l)
			switch r.IntN(8) {
			case 0: // changed
				live = append(live, line(r.IntN(3), 1_000_000+next))
			case 1: // missing
			case 2: // extra
				live = append(live, l, line(r.IntN(3), 2_000_000+next))
			default:
				live = append(live, l)
			}
		}
		a, b := timeline(rec...), timeline(live...)
		want := comparable(oracleFrames(a, b, Options{}))
		for _, budget := range []int{0, alignBudget} {
			if got := comparable(framesWithBudget(a, b, Options{}, budget)); !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d, budget %d: %s, the former alignment %s", i, budget, kinds2(got), kinds2(want))
			}
		}
	}
}

// allDiffer is n notifications that each say something of their own.
func allDiffer(n int, side string) []frame.Frame {
	fs := make([]frame.Frame, n)
	for i := range fs {
		fs[i] = frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out,
			Raw: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"%s %d","kind":"info"}}`, side, i)}
	}
	return fs
}

// TestAlignmentIsNearLinear: aligning 80,000 frames that all differ (31 s
// with go-diff's walk over the whole), every other one differing, each
// occurring once but in another order, drawn from two contents, or
// periodic, takes under 2 s (a fraction of a second, the fastest of three
// tries on a loaded machine).
func TestAlignmentIsNearLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("times alignments of 80,000 frames")
	}
	const n = 80000
	r := rand.New(rand.NewPCG(9, 10))
	seq := func(n int) []int32 {
		a := make([]int32, n)
		for i := range a {
			a[i] = int32(i)
		}
		return a
	}
	cases := []struct {
		name string
		make func(n int) (a, b []int32)
	}{
		{"all differ", func(n int) ([]int32, []int32) {
			a, b := seq(n), seq(n)
			for i := range b {
				b[i] += int32(n)
			}
			return a, b
		}},
		{"every other differs", func(n int) ([]int32, []int32) {
			a, b := seq(n), seq(n)
			for i := 0; i < n; i += 2 {
				b[i] += int32(n)
			}
			return a, b
		}},
		{"shuffled", func(n int) ([]int32, []int32) {
			a, b := seq(n), seq(n)
			r.Shuffle(n, func(i, j int) { b[i], b[j] = b[j], b[i] })
			return a, b
		}},
		{"two contents", func(n int) ([]int32, []int32) { return randomIDs(r, n, 2), randomIDs(r, n, 2) }},
		{"periodic", func(n int) ([]int32, []int32) {
			a, b := make([]int32, n), make([]int32, n)
			for i := range a {
				a[i], b[i] = int32(i%7), int32(i%5)
			}
			return a, b
		}},
	}
	for _, c := range cases {
		a, b := c.make(n)
		var took time.Duration
		for try := range 3 { // CPU time: waiting on a loaded machine does not count
			start := cpuNow()
			es := script(a, b, distinctOf(a, b), alignBudget)
			if d := cpuNow() - start; try == 0 || d < took {
				took = d
			}
			checkScript(t, a, b, es)
			if took < 2*time.Second {
				break
			}
		}
		t.Logf("%s: %d frames aligned in %v of CPU", c.name, n, took)
		if took > 2*time.Second {
			t.Errorf("%s: aligning %d frames took %v: want under 2 s", c.name, n, took)
		}
	}
}

// TestUnifiedMatchesTheOracle: the line diff is the former one, hunk for
// hunk, on random texts of a few distinct lines (with and without a
// final line break) and on edited copies of longer ones.
func TestUnifiedMatchesTheOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	text := func(ids []int32, end bool) string {
		var b strings.Builder
		for i, id := range ids {
			fmt.Fprintf(&b, "line %d", id)
			if i < len(ids)-1 || end {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	for i := range 5000 {
		k := 1 + r.IntN(6)
		a := randomIDs(r, r.IntN(40), k)
		b := randomIDs(r, r.IntN(40), k)
		if i%2 == 0 {
			b = edited(r, a, int32(k), r.IntN(6), true)
		}
		ta, tb := text(a, r.IntN(4) > 0), text(b, r.IntN(4) > 0)
		if got, want := Unified(ta, tb, "a", "b"), oracleUnified(ta, tb, "a", "b"); got != want {
			t.Fatalf("Unified:\n%s\nthe former:\n%s\na %q\nb %q", got, want, ta, tb)
		}
	}
	for range 50 {
		a := randomIDs(r, 2000, 500)
		b := edited(r, a, 500, r.IntN(100), true)
		ta, tb := text(a, true), text(b, true)
		if got, want := Unified(ta, tb, "a", "b"), oracleUnified(ta, tb, "a", "b"); got != want {
			t.Fatalf("Unified of 2,000 lines differs from the former:\n%s\nthe former:\n%s", got, want)
		}
	}
}

// TestWordAndLineDiffsMatchTheOracle: the word and line diffs of changed
// strings are the former ones on random texts of a few distinct words
// and lines, and on edited copies of longer ones.
func TestWordAndLineDiffsMatchTheOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	words := []string{"alpha", "beta", " ", "  ", "\n", ",", "é", "gamma\n", "x_1", "."}
	text := func(ids []int32) string {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(words[int(id)%len(words)])
		}
		return b.String()
	}
	for i := range 5000 {
		k := 1 + r.IntN(len(words))
		a := randomIDs(r, r.IntN(60), k)
		b := randomIDs(r, r.IntN(60), k)
		if i%2 == 0 {
			b = edited(r, a, 0, r.IntN(8), true)
		}
		sa, sb := text(a), text(b)
		if got, want := wordDiff(sa, sb), oracleWordDiff(sa, sb); !reflect.DeepEqual(got, want) {
			t.Fatalf("wordDiff(%q, %q) = %q, the former %q", sa, sb, got, want)
		}
		if got, want := lineDiff(sa, sb), oracleLineDiff(sa, sb); !reflect.DeepEqual(got, want) {
			t.Fatalf("lineDiff(%q, %q) = %q, the former %q", sa, sb, got, want)
		}
	}
}

// TestLongStringDiffIsNearLinear: a frame whose text of 80,000 lines has
// every other line changed costs about four times one of 20,000 lines, not
// sixteen (its line diff and the frame's unified diff took go-diff's walk
// over all of them: 1.2 s at 20,000 lines, four times that at twice the
// lines). The time is the process's CPU time, the least of up to three
// tries of each: the wall clock had read 2.02 s against a bar of 2 s under
// CI's load.
func TestLongStringDiffIsNearLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("compares a text of 80,000 lines")
	}
	frames := func(lines int) (rec, live []frame.Frame) {
		text := func(side string) string {
			var b strings.Builder
			for i := range lines {
				if i%2 == 0 {
					fmt.Fprintf(&b, "same line %d\\n", i)
				} else {
					fmt.Fprintf(&b, "%s line %d\\n", side, i)
				}
			}
			return b.String()
		}
		frameOf := func(side string) string {
			return fmt.Sprintf(`< {"jsonrpc":"2.0","method":"log","params":{"text":"%s"}}`, text(side))
		}
		return timeline(frameOf("rec")), timeline(frameOf("live"))
	}
	cost := func(lines int, rec, live []frame.Frame) time.Duration {
		start := cpuNow()
		r := Frames(rec, live, Options{})
		took := cpuNow() - start
		if len(r.Differences) != 1 || len(r.Differences[0].Changes) != 1 || len(r.Differences[0].Changes[0].Lines) < lines {
			t.Fatalf("%d lines: want one changed frame with a line diff of its text, got %s", lines, kinds2(r))
		}
		return took
	}
	rec20, live20 := frames(20000)
	rec80, live80 := frames(80000)
	var small, big time.Duration
	for round := range 3 {
		s, b := cost(20000, rec20, live20), cost(80000, rec80, live80)
		if round == 0 || s < small {
			small = s
		}
		if round == 0 || b < big {
			big = b
		}
		if big <= 8*small {
			break
		}
	}
	t.Logf("a text of 20,000 lines, every other changed, compared in %v of CPU; of 80,000 in %v (%.1f times)", small, big, float64(big)/float64(small))
	if big > 8*small {
		t.Errorf("80,000 lines took %v, 20,000 %v: want about four times, not sixteen", big, small)
	}
}

// TestFramesAllDifferIsLinear: comparing 80,000 frames that all differ
// (each a changed frame) costs about four times 20,000 of them, not
// sixteen (the former alignment and pairing: 2.4 s and 41 s). The time is
// the process's CPU time (wall time on a machine loaded to 16 had read
// 9.8 times), the least of up to three tries of each.
func TestFramesAllDifferIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("compares 100,000 frames that all differ")
	}
	rec20, live20 := allDiffer(20000, "rec"), allDiffer(20000, "live")
	rec80, live80 := allDiffer(80000, "rec"), allDiffer(80000, "live")
	timeOf := func(rec, live []frame.Frame) time.Duration {
		n := len(rec)
		start := cpuNow()
		r := Frames(rec, live, Options{})
		took := cpuNow() - start
		// Every one is found; the first (at most MaxKept) are kept and made.
		if r.Count() != n || len(r.Differences) == 0 || len(r.Differences) > MaxKept || r.Differences[len(r.Differences)-1].Kind != Changed {
			t.Fatalf("%d frames: %d differences (%d kept), want %d changed", n, r.Count(), len(r.Differences), n)
		}
		return took
	}
	// The least of each size over up to three rounds, the sizes taking
	// turns.
	var small, big time.Duration
	for round := range 3 {
		s, b := timeOf(rec20, live20), timeOf(rec80, live80)
		if round == 0 || s < small {
			small = s
		}
		if round == 0 || b < big {
			big = b
		}
		if big <= 8*small {
			break
		}
	}
	t.Logf("20,000 frames that all differ compared in %v of CPU, 80,000 in %v (%.1f times)", small, big, float64(big)/float64(small))
	if big > 8*small {
		t.Errorf("80,000 frames took %v, 20,000 %v: want about four times, not sixteen", big, small)
	}
}

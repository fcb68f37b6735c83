package diff

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// wholeFrames is Frames with the two sides read whole and aligned at once.
func wholeFrames(recorded, live []frame.Frame, opts Options) Result {
	return compare(Slice(recorded), Slice(live), opts, 0, func(c *comparison, a, b []item) []Difference { return c.align(a, b, alignBudget) }, false)
}

// TestWindowsMatchTheWhole: replays that say what was recorded with
// frames changed, missing, extra or moved, plugin requests (paired by
// order or by the replay's pairing), host requests answered, and stderr
// compared, are reported through a window as the whole alignment reports
// them: difference for difference when they fit in it; past it, as an
// alignment as good (the same frames compared, each in one difference at
// most, as many differences give or take two in a hundred, where two
// alignments are as short).
func TestWindowsMatchTheWhole(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 200 {
		rec, live := replayLike(r, 50+r.IntN(700), 60)
		opts := Options{CompareStderr: i%2 == 0}
		if i%3 == 0 {
			// The replay pairs each live request with the recorded one of
			// the same method and value.
			byValue := map[string]uint64{}
			for _, f := range rec {
				if f.Dir == frame.Out {
					byValue[string(f.Raw)] = f.Seq
				}
			}
			opts.Pair = func(liveSeq uint64) (uint64, bool) {
				for _, f := range live {
					if f.Seq == liveSeq {
						seq, ok := byValue[string(f.Raw)]
						return seq, ok
					}
				}
				return 0, false
			}
		}
		want := comparable(wholeFrames(rec, live, opts))
		for _, window := range []int{64, 256, 1024} {
			got := comparable(compare(Slice(rec), Slice(live), opts, window, nil, false))
			if window >= len(rec) {
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("case %d (%d recorded frames), window %d: %s, whole %s", i, len(rec), window, kinds2(got), kinds2(want))
				}
				continue
			}
			// Past a window, an alignment as good: each frame in one
			// difference at most, and as many differences give or take
			// where two alignments are as short (a frame moved one way or
			// the other, a gap split otherwise).
			g, w := len(got.Differences), len(want.Differences)
			if got.Compared != want.Compared || g > w+2+w/50 || g < w-2-w/50 {
				t.Fatalf("case %d (%d recorded frames), window %d: compared %v, %v; whole %v, %v", i, len(rec), window, got.Compared, byKind(got), want.Compared, byKind(want))
			}
			onceEach(t, got)
		}
	}
}

// onceEach fails when a frame of either side is in two differences.
func onceEach(t *testing.T, r Result) {
	t.Helper()
	seen := map[[2]int]bool{}
	for _, d := range r.Differences {
		for k, s := range []*Side{d.Recorded, d.Live} {
			if s == nil {
				continue
			}
			key := [2]int{k, s.Index}
			if d.Dir == "err" {
				key[0] += 2
			}
			if seen[key] {
				t.Fatalf("frame %d of side %d is in two differences: %s", s.Index, k, kinds2(r))
			}
			seen[key] = true
		}
	}
}

// byKind counts r's differences of each kind.
func byKind(r Result) map[Kind]int {
	n := map[Kind]int{}
	for _, d := range r.Differences {
		n[d.Kind]++
	}
	return n
}

// replayLike is a recording of n frames and a replay of it: the host's
// requests and the plugin's answers, notifications, requests of its own
// and stderr lines, each of its own content; the replay changes, leaves
// out, adds or moves (a few frames on) about one in eight.
func replayLike(r *rand.Rand, n, sparse int) (rec, live []frame.Frame) {
	var recLines, liveLines []string
	var moved []string
	host := 0
	line := func(k int) string {
		switch k % 5 {
		case 0:
			host++
			return fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"h%d","params":{}}`, host, k%2)
		case 1:
			return fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"k":%d}}`, max(host, 1), k)
		case 2:
			return fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"ask%d","params":{"k":%d}}`, 500+k, k%3, k)
		case 3:
			return fmt.Sprintf(`! stderr %d`, k)
		}
		return fmt.Sprintf(`< {"jsonrpc":"2.0","method":"note%d","params":{"k":%d}}`, k%4, k)
	}
	for k := range n {
		l := line(k)
		recLines = append(recLines, l)
		if l[0] == '>' {
			liveLines = append(liveLines, l)
			continue
		}
		switch r.IntN(sparse) {
		case 0: // changed
			liveLines = append(liveLines, line(k+1_000_000))
		case 1: // missing
		case 2: // extra
			liveLines = append(liveLines, l, line(k+2_000_000))
		case 3: // moved on
			moved = append(moved, l)
		default:
			liveLines = append(liveLines, l)
		}
		if len(moved) > 0 && r.IntN(4) == 0 {
			liveLines = append(liveLines, moved...)
			moved = moved[:0]
		}
	}
	return timeline(append(recLines, "exit 0")...), timeline(append(append(liveLines, moved...), "exit 0")...)
}

// TestStreamHoldsAWindow: two timelines of 400,000 frames each, made as
// they are read and never held, are compared holding a window of them:
// the heap stays under 48 MiB while they go through (held whole, they
// would take about 100 MB), and every 1,000th frame's change is found.
func TestStreamHoldsAWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("compares 800,000 frames")
	}
	const n = 400_000
	var peak uint64
	recorded, live := sides(n, 50_000, &peak, func(side string, i int, buf []byte) frame.Frame {
		text := i % 1000
		if side == "live" && i%1000 == 999 {
			text = -text
		}
		return frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out,
			Raw: fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"%d","pad":"0123456789012345678901234567890123456789"}}`, text)}
	})
	res := Stream(recorded, live, Options{})
	if res.Compared != [2]int{n, n} || len(res.Differences) != n/1000 {
		t.Fatalf("compared %v with %d differences, want %d each and %d", res.Compared, len(res.Differences), n, n/1000)
	}
	changedEvery(t, &res, 1000)
	heapUnder(t, peak, 48<<20, "the timelines are held, not streamed")
}

// TestCraftedMethodsStayBounded: a tape whose host requests each name a
// method of their own, 2 kB long, answered by the plugin. What a side
// remembers of them (to know a response by its request, and to number a
// method's requests) is bounded in bytes: before, it kept every method
// (280 MiB of heap here).
func TestCraftedMethodsStayBounded(t *testing.T) {
	const n = 20_000
	pad := strings.Repeat("m", 2000)
	var peak uint64
	recorded, live := sides(2*n, 4000, &peak, func(side string, k int, buf []byte) frame.Frame {
		i := k / 2
		if k%2 == 0 {
			return frame.Frame{Seq: uint64(k + 1), Dir: frame.In,
				Raw: fmt.Appendf(buf, `{"jsonrpc":"2.0","id":%d,"method":"%s/%d"}`, i, pad, i)}
		}
		return frame.Frame{Seq: uint64(k + 1), Dir: frame.Out,
			Raw: fmt.Appendf(buf, `{"jsonrpc":"2.0","id":%d,"result":%d}`, i, i%7)}
	})
	res := Stream(recorded, live, Options{})
	if res.Compared != [2]int{n, n} || len(res.Differences) != 0 {
		t.Fatalf("compared %v with %d differences, want %d each and none", res.Compared, len(res.Differences), n)
	}
	heapUnder(t, peak, 48<<20, "every host request's method is kept")
}

// TestLongLinesStayBounded: 1,500 lines of 100 kB a side (a language
// server's didOpen of a big file, say), one in a hundred changed. The
// window is bounded in bytes as well as in frames: before, it held 16,384
// frames whatever their length, so both sides whole (295 MiB of heap here).
func TestLongLinesStayBounded(t *testing.T) {
	const n = 1500
	pad := strings.Repeat("x", 100_000)
	var peak uint64
	recorded, live := sides(n, 100, &peak, func(side string, i int, buf []byte) frame.Frame {
		v := i
		if side == "live" && i%100 == 99 {
			v = -i
		}
		return frame.Frame{Seq: uint64(i + 1), Dir: frame.Out,
			Raw: fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"n":%d,"text":"%s"}}`, v, pad)}
	})
	res := Stream(recorded, live, Options{})
	// Every difference is counted; those of 100 kB frames kept fit in
	// MaxKeptBytes.
	if res.Compared != [2]int{n, n} || res.Count() != n/100 || len(res.Differences) == 0 {
		t.Fatalf("compared %v with %d differences (%d kept), want %d each and %d", res.Compared, res.Count(), len(res.Differences), n, n/100)
	}
	changedEvery(t, &res, 100)
	heapUnder(t, peak, 48<<20, "a window of long lines holds them all")
}

// TestDifferencesKeptAreBounded: two timelines that differ in every one
// of 100,000 frames. The comparison keeps the first MaxKept differences
// (within MaxKeptBytes) and counts the rest, and the rendering says so:
// before, it kept every one (1.3 GB for 500,000 in a diff of two tapes).
func TestDifferencesKeptAreBounded(t *testing.T) {
	const n = 100_000
	var peak uint64
	recorded, live := sides(n, 10_000, &peak, func(side string, i int, buf []byte) frame.Frame {
		return frame.Frame{Seq: uint64(i + 1), Dir: frame.Out,
			Raw: fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"%s%d"}}`, side, i)}
	})
	res := Stream(recorded, live, Options{})
	if res.Count() != n || len(res.Differences) == 0 || len(res.Differences) > MaxKept || res.More != n-len(res.Differences) || res.Same() {
		t.Fatalf("%d differences kept, %d more: want all %d counted, at most %d kept", len(res.Differences), res.More, n, MaxKept)
	}
	var out strings.Builder
	if err := Render(&out, &res, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("\ndifferences not kept: %d more (tapedeck keeps the first %d of a comparison)\n", res.More, len(res.Differences)); !strings.HasSuffix(out.String(), want) {
		t.Errorf("the rendering does not end with %q", want)
	}
	t.Logf("kept %d", len(res.Differences))
	heapUnder(t, peak, 48<<20, "every difference is kept")
}

// sides are two timelines of n frames each (recorded, live) made as they
// are read, never held: frame i of a side is what frameAt makes (its Raw
// into buf, reused). Every sample frames of the live side, the heap
// (after a collection) is sampled into peak.
func sides(n, sample int, peak *uint64, frameAt func(side string, i int, buf []byte) frame.Frame) (recorded, live Timeline) {
	made := func(side string) Timeline {
		return func(yield func(*frame.Frame) bool) {
			var f frame.Frame
			for i := range n {
				f = frameAt(side, i, f.Raw[:0])
				if side == "live" && i%sample == 0 {
					var ms runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&ms)
					*peak = max(*peak, ms.HeapAlloc)
				}
				if !yield(&f) {
					return
				}
			}
		}
	}
	return made("recorded"), made("live")
}

// heapUnder fails t when the heap sampled reached limit: what is held
// that should not be is why.
func heapUnder(t *testing.T, peak uint64, limit uint64, why string) {
	t.Helper()
	t.Logf("heap at most %.1f MiB", float64(peak)/(1<<20))
	if peak > limit {
		t.Errorf("heap reached %.1f MiB, want under %.0f MiB: %s", float64(peak)/(1<<20), float64(limit)/(1<<20), why)
	}
}

// changedEvery fails t unless every difference res kept is a changed
// frame whose recorded seq is a multiple of every.
func changedEvery(t *testing.T, res *Result, every uint64) {
	t.Helper()
	for _, d := range res.Differences {
		if d.Kind != Changed || d.Recorded.Seq%every != 0 {
			t.Fatalf("difference %s at recorded seq %d, want every %dth frame changed", d.Kind, d.Recorded.Seq, every)
		}
	}
}

// TestFramesHoldsTheCallersFrames: Frames compares frames its caller
// holds, so that its windows hold them, not copies (a frame and its bytes
// for each frame of each side, 21 MB of a 200,000-frame replay's 110 MB of
// garbage): it allocates at least 100 bytes a frame less than Stream over
// the same frames, which copies what it holds (its frames may be reused).
// Not parallel: it counts the process's allocations.
func TestFramesHoldsTheCallersFrames(t *testing.T) {
	const n = 20000
	rec := allDiffer(n, "same")
	allocated := func(compare func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		compare()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	held := allocated(func() { Frames(rec, rec, Options{}) })
	copied := allocated(func() { Stream(Slice(rec), Slice(rec), Options{}) })
	if copied < held+100*n {
		t.Errorf("Frames allocated %d bytes, Stream %d: Frames copies the frames it holds", held, copied)
	}
}

package shrink

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// TestSplitMatchesReference: Split and Keep, which count a pooled run's
// steps with prefix sums, cut and keep exactly as the walk over the run
// they replaced (referenceSplit, referenceKeep) on random recordings:
// host steps written ahead or not, requests both ways with ids that
// repeat, replies late or missing, stderr, events, a lifecycle or none.
func TestSplitMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lcs := []Lifecycle{{}, agenttyLifecycle}
	pooled, keptByRun := 0, 0
	for n := range 1000 {
		rec := randomRecording(rng, 1+rng.IntN(40))
		lc := lcs[n%len(lcs)]
		got, want := Split(rec, lc), referenceSplit(rec, lc)
		if !reflect.DeepEqual(got.owner, want.owner) || !reflect.DeepEqual(got.from, want.from) ||
			!reflect.DeepEqual(got.units, want.units) || !reflect.DeepEqual(got.steps, want.steps) ||
			!reflect.DeepEqual(got.pooled, want.pooled) {
			t.Fatalf("recording %d: Split = owner %v from %v pooled %v, want owner %v from %v pooled %v\n%s",
				n, got.owner, got.from, got.pooled, want.owner, want.from, want.pooled, dump(rec))
		}
		pooled += len(got.pooled)
		for range 8 {
			var keep []int
			for s := range got.Steps() {
				if rng.IntN(3) == 0 {
					keep = append(keep, s)
				}
			}
			if g, w := seqsOf(got.Keep(keep)), seqsOf(referenceKeep(want, keep)); !reflect.DeepEqual(g, w) {
				t.Fatalf("recording %d: Keep(%v) = seqs %v, want %v\n%s", n, keep, g, w, dump(rec))
			}
			_, reads := got.keep(keep)
			keptByRun += reads
		}
	}
	if pooled == 0 || keptByRun == 0 {
		t.Errorf("%d pooled frames, %d decided by their run: the recordings do not test pooling", pooled, keptByRun)
	}
}

// TestSplitReadsEachRunOnce: the host writes n steps ahead, then the
// plugin says n frames, each pooled over all n steps. Split and Keep read
// such a run once per frame that follows it (runReads), not once per step
// of the run per frame, as the walk they replaced did (n² reads here: the
// test says so by counting the reference's).
func TestSplitReadsEachRunOnce(t *testing.T) {
	const n = 500
	var rec []frame.Frame
	for i := range n {
		rec = append(rec, line(uint64(len(rec)+1), frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","method":"h","params":{"i":%d}}`, i)))
	}
	for i := range n {
		rec = append(rec, line(uint64(len(rec)+1), frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","method":"p","params":{"i":%d}}`, i)))
	}
	tp := Split(rec, Lifecycle{})
	if tp.Steps() != n || len(tp.pooled) != n {
		t.Fatalf("%d steps, %d pooled frames, want %d and %d", tp.Steps(), len(tp.pooled), n, n)
	}
	var wantSplit, wantKeep int
	referenceSplitCounting(rec, Lifecycle{}, &wantSplit)
	referenceKeepCounting(tp, []int{n - 2}, &wantKeep)
	if got := tp.runReads; got > len(rec) {
		t.Errorf("Split read %d runs of units for %d frames, want at most one a frame (the walk read %d units)", got, len(rec), wantSplit)
	}
	// Keeping the step before the run's last: the walk read the run up to
	// it for each pooled frame (the last step is each one's owner).
	out, got := tp.keep([]int{n - 2})
	if len(out) != n+1 {
		t.Fatalf("Keep of step %d: %d frames, want %d", n-2, len(out), n+1)
	}
	if got > len(rec) {
		t.Errorf("Keep read %d runs of units for %d frames, want at most one a frame (the walk read %d units)", got, len(rec), wantKeep)
	}
	if wantSplit < n*n || wantKeep < n*(n-1) {
		t.Errorf("the walk read %d and %d units: the recording no longer makes it read a run per frame", wantSplit, wantKeep)
	}
}

func seqsOf(fs []frame.Frame) []uint64 {
	var s []uint64
	for _, f := range fs {
		s = append(s, f.Seq)
	}
	return s
}

func dump(rec []frame.Frame) string {
	var s string
	for _, f := range rec {
		if f.IsEvent() {
			s += fmt.Sprintf("%d %s\n", f.Seq, f.Event)
			continue
		}
		s += fmt.Sprintf("%d %s %s\n", f.Seq, f.Dir, f.Raw)
	}
	return s
}

// randomRecording makes a recording of n frames from a small vocabulary,
// so that runs, repeated ids and the lifecycle's methods come up often.
func randomRecording(rng *rand.Rand, n int) []frame.Frame {
	var rec []frame.Frame
	add := func(f frame.Frame) {
		f.Seq = uint64(len(rec) + 1)
		rec = append(rec, f)
	}
	methods := []string{"initialize", "shutdown", "ui/event", "session/get", "panel/open"}
	for range n {
		id := rng.IntN(3)
		m := methods[rng.IntN(len(methods))]
		switch rng.IntN(12) {
		case 0, 1, 2:
			add(line(0, frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{}}`, m)))
		case 3, 4:
			add(line(0, frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{}}`, id, m)))
		case 5:
			add(line(0, frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":null}`, id)))
		case 6:
			add(line(0, frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id)))
		case 7:
			add(line(0, frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"storage/get","params":{}}`, id)))
		case 8, 9:
			add(line(0, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{}}`))
		case 10:
			add(line(0, frame.Err, "log"))
		case 11:
			switch rng.IntN(4) {
			case 0:
				add(frame.Frame{Event: frame.EventEOF, Dir: frame.In})
			case 1:
				add(frame.Frame{Event: frame.EventSignal})
			default:
				code := 0
				add(frame.Frame{Event: frame.EventExit}.WithEnd("", &code))
			}
		}
	}
	return rec
}

// referenceSplit is Split as it was before the prefix sums: the same
// assignment, then each pooled frame's run walked to count its steps
// that may go.
func referenceSplit(recorded []frame.Frame, lc Lifecycle) *Tape {
	var reads int
	return referenceSplitCounting(recorded, lc, &reads)
}

// referenceSplitCounting is referenceSplit, adding to reads each unit its
// walks read.
func referenceSplitCounting(recorded []frame.Frame, lc Lifecycle, reads *int) *Tape {
	t := assign(recorded, lc)
	for i := range t.from {
		if t.from[i] == t.owner[i] {
			continue
		}
		removable := 0
		for u := t.from[i]; u <= t.owner[i]; u++ {
			*reads++
			if !t.units[u].Fixed {
				removable++
			}
		}
		if removable < 2 {
			t.from[i] = t.owner[i]
			continue
		}
		t.pooled[recorded[i].Seq] = true
	}
	return t
}

// referenceKeep is Keep as it was before the prefix sums: it walks a
// pooled frame's run for a kept unit.
func referenceKeep(t *Tape, keep []int) []frame.Frame {
	var reads int
	return referenceKeepCounting(t, keep, &reads)
}

// referenceKeepCounting is referenceKeep, adding to reads each unit its
// walks read.
func referenceKeepCounting(t *Tape, keep []int, reads *int) []frame.Frame {
	kept := make([]bool, len(t.units))
	for i, u := range t.units {
		kept[i] = u.Fixed
	}
	for _, s := range keep {
		kept[t.steps[s]] = true
	}
	var out []frame.Frame
	for i, o := range t.owner {
		keep := o < 0 || kept[o]
		for u := t.from[i]; !keep && u >= 0 && u < o; u++ {
			*reads++
			keep = kept[u]
		}
		if keep {
			out = append(out, t.frames[i])
		}
	}
	return out
}

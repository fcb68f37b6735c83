package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
)

// namesFromStart is how the unmet causes were named before owedSeqs: each
// cause's owed frames counted by occurrence from the recording's start
// (the last need − have of the required ones), a scan of every recorded
// line a cause at every give-up.
func namesFromStart(r *runner) []string {
	var missing []string
	for c, n := range r.need {
		h := r.have[c]
		if h >= n {
			continue
		}
		what := strings.Replace(strings.Replace(c, "call ", "", 1), "reply ", "reply to id ", 1)
		if n-h > 1 {
			what = fmt.Sprintf("%d × %s", n-h, what)
		}
		from, to := r.required[c]-(n-h), r.required[c]
		var o owed
		k := 0
		for i := range r.plan.expect {
			e := &r.plan.expect[i]
			if !e.ok || e.cause != c {
				continue
			}
			if k++; k > from && k <= to {
				o.n++
				if len(o.seqs) < 3 {
					o.seqs = append(o.seqs, e.frame.Seq)
				}
			}
		}
		missing = append(missing, what+o.String())
	}
	slices.Sort(missing)
	return missing
}

// TestOwedSeqsNameWhatTheStepsRequired: at random steps, with the live
// plugin saying some of what they wait for and giving up now and then,
// the unmet causes are named with the recorded frames they stand for as
// a count from the recording's start names them (namesFromStart), though
// owedSeqs reads only the lines since the last give-up.
func TestOwedSeqsNameWhatTheStepsRequired(t *testing.T) {
	t.Parallel()
	causes := []string{"call ui/notify", "call ui/setBadge", "reply 1", "reply 2", "call ui/setPanel"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		// A recording: steps, each after a few recorded plugin lines.
		var expect []expected
		var stepSeqs []uint64
		var stepCauses [][]string
		seq := uint64(0)
		for range 30 {
			var cs []string
			for range rng.IntN(4) {
				seq++
				c := causes[rng.IntN(len(causes))]
				f := &frame.Frame{Seq: seq, Dir: frame.Out}
				expect = append(expect, expected{frame: f, cause: c, ok: true})
				if rng.IntN(8) == 0 { // a line that causes nothing
					seq++
					expect = append(expect, expected{frame: &frame.Frame{Seq: seq, Dir: frame.Out}})
				}
				cs = append(cs, c)
			}
			seq++
			stepSeqs, stepCauses = append(stepSeqs, seq), append(stepCauses, cs)
		}
		r := &runner{
			plan:     &plan{expect: expect, calls: map[string][]*call{}},
			need:     map[string]int{},
			have:     map[string]int{},
			required: map[string]int{},
			unmet:    map[string]struct{}{},
			lostTo:   map[string]int{},
		}
		for i, at := range stepSeqs {
			r.require(stepCauses[i])
			r.reach(at)
			for range rng.IntN(3) {
				r.saw(causes[rng.IntN(len(causes))])
			}
			want, got := namesFromStart(r), r.unmetCauses()
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, step %d: unmet causes named\n%q\nwant (counted from the start)\n%q", seed, i, got, want)
			}
			if rng.IntN(4) == 0 {
				r.forgiveCauses()
				if len(r.unmet) != 0 || len(namesFromStart(r)) != 0 {
					t.Fatalf("seed %d, step %d: causes left unmet after a give-up: %q", seed, i, namesFromStart(r))
				}
			}
		}
	}
}

// TestGivingUpAtEveryStepTakesLinearTime: a plugin that closed its stdout
// but still reads its stdin ends every wait at once, and each of a
// recording's requests is given up on: 32 times the steps take at most 64
// times as long (4 to 6 measured: a run's start weighs on the small one),
// not about 1,000. Before, every give-up read the recorded stdout from its
// start and every call of the method: 20,000 took 26 times as long as
// 2,500 here, and 30 s through the command line, where 5,000 took 3. Not
// beside the package's parallel tests.
func TestGivingUpAtEveryStepTakesLinearTime(t *testing.T) {
	recording := func(n int) []frame.Frame {
		lines := make([]string, 0, 3*n)
		for i := range n {
			lines = append(lines,
				`> {"jsonrpc":"2.0","method":"ui/event","params":{}}`,
				fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"host/ask","params":{}}`, i),
				fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"result":{}}`, i))
		}
		return tl(lines...)
	}
	took := func(n int) time.Duration {
		rec := recording(n)
		start := time.Now()
		res, err := Run(context.Background(), rec, Options{Command: []string{"sh", "-c", "exec >&-; cat >/dev/null"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(note.Join(res.Notes, "\n"), "never made the host/ask request"); got != n {
			t.Fatalf("%d requests: the notes say of %d that the plugin never made it, want every one", n, got)
		}
		return time.Since(start)
	}
	small, big := took(1000), took(32000)
	t.Logf("1,000 give-ups: %v; 32,000: %v (%.1f×)", small, big, float64(big)/float64(small))
	if big > 64*small {
		t.Errorf("32,000 give-ups took %v, %.0f times the %v of 1,000: it grows with the square of the steps", big, float64(big)/float64(small), small)
	}
}

package playback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// patience bounds every wait of these tests for something that a correct
// inOrder makes happen: a broken one fails them instead of hanging them.
const patience = 10 * time.Second

// TestInOrderRunsSideBySideAndReportsInOrder: with jobs 3, work 0 ends
// only once work 1 and 2 have started (so they run beside it) and work 1
// only once work 2 has ended (so results come in out of order); each
// still has every result in order, and never more than 3 work at once.
func TestInOrderRunsSideBySideAndReportsInOrder(t *testing.T) {
	const n, jobs = 9, 3
	started := make([]chan struct{}, n)
	ended := make([]chan struct{}, n)
	for i := range n {
		started[i], ended[i] = make(chan struct{}), make(chan struct{})
	}
	var running, most atomic.Int32
	await := func(ch chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-time.After(patience):
			return errors.New(what)
		}
	}
	work := func(_ context.Context, i int) (string, error) {
		now := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		close(started[i])
		defer close(ended[i])
		switch i {
		case 0:
			if err := await(started[1], "work 1 did not start beside work 0"); err != nil {
				return "", err
			}
			if err := await(started[2], "work 2 did not start beside work 0"); err != nil {
				return "", err
			}
		case 1:
			if err := await(ended[2], "work 2 did not end while work 1 was under way"); err != nil {
				return "", err
			}
		}
		return fmt.Sprint("result ", i), nil
	}
	var got []string
	if i, err := inOrder(context.Background(), n, jobs, work, func(i int, v string) error {
		if want := fmt.Sprint("result ", len(got)); v != want {
			t.Errorf("each had %q (index %d) after %d results, want %q", v, i, len(got), want)
		}
		got = append(got, v)
		return nil
	}); err != nil {
		t.Fatalf("work %d: %v", i, err)
	}
	if len(got) != n {
		t.Errorf("each had %d results, want %d", len(got), n)
	}
	if m := most.Load(); m > jobs {
		t.Errorf("%d ran at once, want at most %d", m, jobs)
	}
}

// TestInOrderStopsAtTheFirstError: work 3 fails; the work after it waits
// for its ctx to be cancelled. inOrder returns work 3's error once all
// the work it started has ended, each having had results 0 to 2 only, and
// has started no more than 2 × jobs beyond the results each had.
func TestInOrderStopsAtTheFirstError(t *testing.T) {
	const n, jobs = 100, 2
	boom := errors.New("boom")
	var running, calls atomic.Int32
	work := func(ctx context.Context, i int) (int, error) {
		calls.Add(1)
		running.Add(1)
		defer running.Add(-1)
		switch {
		case i < 3:
			return i, nil
		case i == 3:
			return 0, boom
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(patience):
			return 0, errors.New("ctx was not cancelled")
		}
	}
	var had []int
	i, err := inOrder(context.Background(), n, jobs, work, func(_ int, v int) error { had = append(had, v); return nil })
	if i != 3 || !errors.Is(err, boom) {
		t.Fatalf("inOrder returned %d, %v; want 3, %v", i, err, boom)
	}
	if r := running.Load(); r != 0 {
		t.Errorf("%d work still under way after inOrder returned", r)
	}
	if fmt.Sprint(had) != "[0 1 2]" {
		t.Errorf("each had %v, want [0 1 2]", had)
	}
	if c := calls.Load(); c > 3+2*jobs {
		t.Errorf("%d work started, want at most %d (3 results had, 2 × jobs beyond)", c, 3+2*jobs)
	}
}

// TestInOrderStopsWhenCtxIsDone: the caller's ctx cancelled while work 0
// is under way stops it and everything after it, with ctx's error.
func TestInOrderStopsWhenCtxIsDone(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		t.Run(fmt.Sprint("jobs ", jobs), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var calledAfter []int // work called once ctx was done
			work := func(ctx context.Context, i int) (int, error) {
				if i == 0 {
					cancel()
				} else if ctx.Err() != nil {
					mu.Lock()
					calledAfter = append(calledAfter, i)
					mu.Unlock()
				}
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(patience):
					return 0, errors.New("ctx was not cancelled")
				}
			}
			i, err := inOrder(ctx, 10, jobs, work, func(i, _ int) error { t.Errorf("each had result %d", i); return nil })
			if i != 0 || !errors.Is(err, context.Canceled) {
				t.Errorf("inOrder returned %d, %v; want 0, %v", i, err, context.Canceled)
			}
			if len(calledAfter) > 0 {
				t.Errorf("work %v called with a done ctx", calledAfter)
			}
		})
	}
}

func init() {
	// randomid is prompt with a note id of its own on every run: six
	// random characters, a letter and a digit in turn.
	fixtures["randomid"] = func() int {
		id := make([]byte, 6)
		for i := range id {
			if i%2 == 0 {
				id[i] = byte('a' + rand.IntN(26))
			} else {
				id[i] = byte('0' + rand.IntN(10))
			}
		}
		text, _ := json.Marshal("Summarise note " + string(id) + " created 2026-12-01T10:00:00Z")
		return serve(func(m hostMessage) []string {
			if m.Method == "ui/event" && m.Params.Element == "go" {
				return []string{`{"jsonrpc":"2.0","id":1,"method":"terminal/send","params":{"text":` + string(text) + `}}`}
			}
			return nil
		})
	}
}

// TestNoiseAtOnceIsNoiseInTurn: Noise with 3 runs at once proposes what
// it proposes one run at a time for a plugin whose note id differs on
// every run: a filter for the id, nothing for the time that stays.
func TestNoiseAtOnceIsNoiseInTurn(t *testing.T) {
	rec := promptTape(t)
	ctx := context.Background()
	opt := &Options{Env: fixtureEnv("randomid")}
	first := Replay(ctx, rec, opt)
	if first.Err != nil || first.Same() {
		t.Fatalf("first replay: err %v, same %v", first.Err, first.Same())
	}
	want := Filter{Regex: `note [0-9a-z]{6}\b`, Replacement: "note [id]", At: "terminal/send:params.text"}
	for _, jobs := range []int{1, 3} {
		nr, err := Noise(ctx, rec, opt, first, 7, jobs)
		if err != nil {
			t.Fatalf("jobs %d: %v", jobs, err)
		}
		if nr.Runs != 7 || len(nr.Rules)+len(nr.Stable) != 0 || len(nr.Filters) != 1 || nr.Filters[0] != want {
			t.Errorf("jobs %d: %d runs, rules %q, filters %+v, stable %+v; want 7 runs and the filter %+v alone", jobs, nr.Runs, nr.Rules, nr.Filters, nr.Stable, want)
		}
	}
}

// TestNoiseSaysWhichRunFailed: a further run that cannot run (its
// --fresh-dir folder cannot be made) is named, with jobs 1 and 3 alike.
func TestNoiseSaysWhichRunFailed(t *testing.T) {
	rec, opt, first := firstRandomIDReplay(t)
	ctx := context.Background()
	opt.FreshDirs = []string{"PATH"}
	for _, jobs := range []int{1, 3} {
		_, err := Noise(ctx, rec, opt, first, 5, jobs)
		if err == nil || !strings.Contains(err.Error(), "(run 2): --fresh-dir") {
			t.Errorf("jobs %d: %v, want run 2's --fresh-dir error", jobs, err)
		}
	}
}

// BenchmarkNoiseHelloGo replays the bundled Go plugin's tape as
// `replay --runs` does, one op a further run, with -j 1 and -j 2: for
// profiles of a run's cost (-cpuprofile, -memprofile).
//
//	go test -run '^$' -bench NoiseHelloGo -benchtime 400x -cpuprofile cpu.out ./playback
func BenchmarkNoiseHelloGo(b *testing.B) {
	plugin := filepath.Join(b.TempDir(), "hello-go")
	if out, err := exec.Command("go", "build", "-o", plugin, "../testdata/plugins/hello-go").CombinedOutput(); err != nil {
		b.Skipf("build the hello-go fixture: %v\n%s", err, out)
	}
	rec, err := ReadTape("../testdata/tapes/hello-go.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opt := &Options{Command: []string{plugin}}
	first := Replay(ctx, rec, opt)
	if first.Err != nil || !first.Same() {
		b.Fatalf("first replay: err %v, same %v", first.Err, first.Same())
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprint("j", jobs), func(b *testing.B) {
			nr, err := Noise(ctx, rec, opt, first, b.N+1, jobs)
			if err != nil {
				b.Fatal(err)
			}
			if len(nr.Rules)+len(nr.Filters) > 0 {
				b.Fatalf("the runs differ: %+v", nr)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "replays/min")
		})
	}
}

// TestInOrderStopsAtAnErrorOfEach: an error from each ends inOrder with
// its index, and each hears of nothing after it.
func TestInOrderStopsAtAnErrorOfEach(t *testing.T) {
	stop := errors.New("each stops here")
	for _, jobs := range []int{1, 3} {
		var had []int
		work := func(_ context.Context, i int) (int, error) { return i, nil }
		i, err := inOrder(context.Background(), 10, jobs, work, func(i, v int) error {
			had = append(had, v)
			if i == 2 {
				return stop
			}
			return nil
		})
		if i != 2 || !errors.Is(err, stop) || len(had) != 3 {
			t.Errorf("jobs %d: inOrder returned %d, %v after %v; want 2, %v after [0 1 2]", jobs, i, err, had, stop)
		}
	}
}

// TestSameLines: two timelines are the same for a comparison when the
// frames it reads are, in order: stdout, host frames and the exit always,
// stderr only when compared; other events and when each came are not
// read.
func TestSameLines(t *testing.T) {
	zero, one := 0, 1
	line := func(seq uint64, dir frame.Dir, raw string) frame.Frame {
		return frame.Frame{Seq: seq, At: int64(seq) * 7, Dir: dir, Raw: []byte(raw)}
	}
	exit := func(code *int) frame.Frame { return frame.Frame{Event: frame.EventExit}.WithEnd("", code) }
	a := []frame.Frame{line(1, frame.In, `{"m":1}`), line(2, frame.Err, "starting"), line(3, frame.Out, `{"r":1}`), {Event: frame.EventEOF, Dir: frame.In}, exit(&zero)}
	// The stderr line elsewhere, no EOF event, other seqs and times.
	b := []frame.Frame{line(5, frame.In, `{"m":1}`), line(6, frame.Out, `{"r":1}`), line(7, frame.Err, "starting"), exit(&zero)}
	if !sameLines(a, b, false) {
		t.Error("stderr's place and an EOF event made the runs differ, with stderr not compared")
	}
	if sameLines(a, b, true) {
		t.Error("stderr in another place is the same, with stderr compared")
	}
	for name, c := range map[string][]frame.Frame{
		"stdout": {line(5, frame.In, `{"m":1}`), line(6, frame.Out, `{"r":2}`), exit(&zero)},
		"host":   {line(5, frame.In, `{"m":2}`), line(6, frame.Out, `{"r":1}`), exit(&zero)},
		"order":  {line(6, frame.Out, `{"r":1}`), line(5, frame.In, `{"m":1}`), exit(&zero)},
		"exit":   {line(5, frame.In, `{"m":1}`), line(6, frame.Out, `{"r":1}`), exit(&one)},
		"more":   {line(5, frame.In, `{"m":1}`), line(6, frame.Out, `{"r":1}`), line(7, frame.Out, `{}`), exit(&zero)},
		"less":   {line(5, frame.In, `{"m":1}`), exit(&zero)},
	} {
		if sameLines(a, c, false) || sameLines(c, a, false) {
			t.Errorf("%s: a difference a comparison reads went unseen", name)
		}
	}
}

// TestNoiseRunsUnderWhatTheFirstRanUnder: the further runs share what the
// first replay worked out (its tapedeck.json among it): a tapedeck.json
// broken after the first run is not read again.
func TestNoiseRunsUnderWhatTheFirstRanUnder(t *testing.T) {
	rec, opt, first := firstRandomIDReplay(t)
	ctx := context.Background()
	if err := os.WriteFile(ConfigPath(rec.TapePath), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	nr, err := Noise(ctx, rec, opt, first, 3, 2)
	if err != nil || nr.Runs != 3 || len(nr.Filters) != 1 {
		t.Fatalf("Noise after the first run: %v, %+v", err, nr)
	}
}

// firstRandomIDReplay is the first replay of promptTape against a plugin
// whose note id is random on every run.
func firstRandomIDReplay(t *testing.T) (*Recording, *Options, *Outcome) {
	t.Helper()
	rec := promptTape(t)
	opt := &Options{Env: fixtureEnv("randomid")}
	first := Replay(context.Background(), rec, opt)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	return rec, opt, first
}

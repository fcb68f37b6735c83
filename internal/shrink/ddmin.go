package shrink

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Test runs one candidate, the removable steps keep (sorted), and reports
// whether it still fails the same way. It must return promptly once ctx
// is done (its answer is then ignored). It is called from several
// goroutines at once when Options.Jobs > 1.
type Test func(ctx context.Context, keep []int) (bool, error)

// Options tunes Minimize.
type Options struct {
	// Jobs is how many tests run at once (default 1). Candidates are
	// tried in ddmin's order; with Jobs > 1 later ones run alongside and
	// the first that fails in that order wins, so the result is the one a
	// sequential run finds.
	Jobs int
	// MaxRuns bounds the tests run (0: no bound). Past it Minimize returns
	// the smallest failing set found so far.
	MaxRuns int
	// Progress, when set, is called (from Minimize's goroutine) after each
	// test and each reduction.
	Progress func(Progress)
}

// Progress is where a minimization stands.
type Progress struct {
	Left  int // steps in the smallest failing set so far
	Total int // steps at the start
	Runs  int // tests run (started) so far
}

// Result is what Minimize found.
type Result struct {
	Keep []int // the steps of the smallest failing set found, sorted
	Runs int   // tests run (started), cancelled ones included
	// Bounded reports that MaxRuns stopped the search before Keep was
	// 1-minimal (no single step could go).
	Bounded bool
}

// errBounded ends the search when MaxRuns is spent.
var errBounded = errors.New("run budget spent")

// Minimize runs ddmin (Zeller and Hildebrandt's delta debugging) over the
// steps 0 … n-1, which together fail: it first tries no step at all, then
// splits the failing set into chunks and tries each chunk and each
// complement, keeping the first that still fails and splitting finer when
// none does, until no single step can go. Results are memoised, so no
// set is tested twice. It blocks until done, until MaxRuns, or until ctx
// is cancelled (then it returns ctx's error); every test it started has
// returned by then. A test's error ends it with that error.
func Minimize(ctx context.Context, n int, test Test, opts Options) (Result, error) {
	m := &minimizer{test: test, opts: opts, total: n, seen: map[string]bool{}}
	if m.opts.Jobs < 1 {
		m.opts.Jobs = 1
	}
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	m.left = n
	err := m.run(ctx, items)
	res := Result{Keep: m.best, Runs: m.runs}
	if res.Keep == nil {
		res.Keep = items
	}
	if errors.Is(err, errBounded) {
		res.Bounded = true
		err = nil
	}
	return res, err
}

type minimizer struct {
	test  Test
	opts  Options
	total int
	left  int
	runs  int
	seen  map[string]bool // candidate key → fails
	best  []int
}

func (m *minimizer) progress() {
	if m.opts.Progress != nil {
		m.opts.Progress(Progress{Left: m.left, Total: m.total, Runs: m.runs})
	}
}

func (m *minimizer) found(items []int) {
	m.best = items
	m.left = len(items)
	m.progress()
}

func (m *minimizer) run(ctx context.Context, items []int) error {
	if len(items) == 0 {
		return nil
	}
	// The failure may need no step at all.
	i, err := m.first(ctx, [][]int{{}})
	if err != nil {
		return err
	}
	if i == 0 {
		m.found([]int{})
		return nil
	}
	gran := 2
	for len(items) >= 2 {
		chunks := split(items, gran)
		cands := append([][]int(nil), chunks...)
		if gran > 2 {
			for _, c := range chunks {
				cands = append(cands, without(items, c))
			}
		}
		i, err := m.first(ctx, cands)
		if err != nil {
			return err
		}
		switch {
		case i < 0:
			if gran >= len(items) {
				return nil
			}
			gran = min(2*gran, len(items))
		case i < len(chunks):
			items, gran = chunks[i], 2
			m.found(items)
		default:
			items, gran = cands[i], max(gran-1, 2)
			m.found(items)
		}
	}
	return nil
}

// split cuts items into n chunks of nearly equal size, in order.
func split(items []int, n int) [][]int {
	var out [][]int
	start := 0
	for i := range n {
		end := start + (len(items)-start)/(n-i)
		out = append(out, items[start:end])
		start = end
	}
	return out
}

// without is items less the ones in c (both sorted).
func without(items, c []int) []int {
	drop := map[int]bool{}
	for _, x := range c {
		drop[x] = true
	}
	var out []int
	for _, x := range items {
		if !drop[x] {
			out = append(out, x)
		}
	}
	return out
}

func key(keep []int) string {
	var b strings.Builder
	for _, x := range keep {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(',')
	}
	return b.String()
}

// first tests cands in order, up to Jobs at a time, and returns the index
// of the first that fails (the lowest index, whatever finished first), or
// -1. Runs past a found index are cancelled; every started test has
// returned when first does.
func (m *minimizer) first(ctx context.Context, cands [][]int) (int, error) {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	type answer struct {
		i     int
		fails bool
		err   error
	}
	answers := make(chan answer)
	state := make([]int8, len(cands)) // 0 unknown, 1 fails, -1 passes
	cancels := map[int]context.CancelFunc{}
	dropped := map[int]bool{} // cancelled because an earlier one fails: their answers mean nothing
	var wg sync.WaitGroup
	defer wg.Wait()
	running, next, best := 0, 0, -1
	var failure error
	for {
		// Start what may still matter, within the budget.
		for failure == nil && running < m.opts.Jobs && next < len(cands) && (best < 0 || next < best) {
			k := key(cands[next])
			if fails, ok := m.seen[k]; ok {
				state[next] = verdict(fails)
				if fails && (best < 0 || next < best) {
					best = next
				}
				next++
				continue
			}
			if m.opts.MaxRuns > 0 && m.runs >= m.opts.MaxRuns {
				break
			}
			cctx, cancel := context.WithCancel(ctx)
			cancels[next] = cancel
			m.runs++
			running++
			wg.Add(1)
			go func(i int, keep []int) {
				defer wg.Done()
				fails, err := m.test(cctx, keep)
				answers <- answer{i, fails, err}
			}(next, cands[next])
			next++
		}
		// Decided: every candidate before the first failing one passes.
		decided, undecided := -1, false
		for i, s := range state {
			if s == 1 {
				decided = i
				break
			}
			if s == 0 {
				undecided = true
				break
			}
		}
		if decided >= 0 || failure != nil || running == 0 {
			for _, c := range cancels {
				c()
			}
			for running > 0 {
				<-answers
				running--
			}
			switch {
			case failure != nil:
				return -1, failure
			case decided >= 0:
				return decided, nil
			case undecided || next < len(cands):
				return -1, errBounded
			}
			return -1, nil
		}
		a := <-answers
		running--
		cancels[a.i]()
		delete(cancels, a.i)
		switch {
		case ctx.Err() != nil:
			failure = ctx.Err()
		case dropped[a.i]:
		case a.err != nil:
			failure = fmt.Errorf("candidate of %d steps: %w", len(cands[a.i]), a.err)
		default:
			m.seen[key(cands[a.i])] = a.fails
			state[a.i] = verdict(a.fails)
			if a.fails && (best < 0 || a.i < best) {
				best = a.i
				for i, c := range cancels {
					if i > best {
						dropped[i] = true
						c()
					}
				}
			}
		}
		m.progress()
	}
}

func verdict(fails bool) int8 {
	if fails {
		return 1
	}
	return -1
}

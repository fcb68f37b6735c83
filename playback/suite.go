package playback

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os/exec"
	"path/filepath"
	"time"
)

// TapeResult is one tape of a suite: replayed, or skipped and why.
type TapeResult struct {
	Tape    string
	Outcome *Outcome // nil when skipped
	Skip    string   // why it was skipped ("" when it ran)
	Elapsed time.Duration
	// Pending is the change written beside the tape for review, with
	// SuiteOptions.Update ("" when none).
	Pending string
	// UpdateErr says why the change could not be written.
	UpdateErr error
}

// SuiteOptions say how Suite runs tapes.
type SuiteOptions struct {
	Replay Options // how each tape is replayed
	Jobs   int     // tapes at once; 0 or less: 1
	// FailOnSkip fails a tape whose plugin's program is not installed
	// here, instead of skipping it.
	FailOnSkip bool
	// Update writes each failing tape's live run beside it as
	// NAME.jsonl.new, for review (see Update).
	Update bool
}

// Suite replays tapes, Jobs at a time, and calls each with every result in
// the order of tapes, as soon as it and those before it are done (from
// the calling goroutine). It returns once every replay has ended. An error
// from each stops the rest (the replays under way are stopped) and is
// returned. A result is dropped once each has had it (a run of many tapes
// holds only those under way and at most 2 × Jobs waiting their turn):
// each keeps a copy of what it needs.
func Suite(ctx context.Context, tapes []string, opt *SuiteOptions, each func(i int, r *TapeResult) error) error {
	if opt == nil {
		opt = &SuiteOptions{}
	}
	replay := func(ctx context.Context, i int) (TapeResult, error) {
		r := RunTape(ctx, tapes[i], &opt.Replay)
		if opt.Update && r.Outcome != nil && !r.Outcome.Same() {
			if u, err := Update(r.Outcome, nil); err != nil {
				r.UpdateErr = err
			} else {
				r.Pending = u.Pending
			}
		}
		return r, nil
	}
	report := func(i int, r TapeResult) error {
		if r.Skip != "" && opt.FailOnSkip {
			r.Outcome = &Outcome{Recording: &Recording{Name: r.Tape}, Err: errors.New(r.Skip + " (--fail-on-skip)")}
			r.Skip = ""
		}
		return each(i, &r)
	}
	_, err := inOrder(ctx, len(tapes), max(opt.Jobs, 1), replay, report)
	return err
}

// RunTape replays one tape, or says why it is skipped: its plugin's
// program is not installed here. A wait it is told of (opt.Waiting) is
// named after the tape.
func RunTape(ctx context.Context, path string, opt *Options) TapeResult {
	start := time.Now()
	r := TapeResult{Tape: path}
	rec, err := ReadTape(path)
	if err != nil {
		r.Outcome = &Outcome{Recording: &Recording{Name: path}, Err: err}
		return r
	}
	if len(rec.Meta.Command) > 0 {
		prog := rec.Meta.Command[0]
		if _, err := exec.LookPath(prog); err != nil {
			if _, err := exec.LookPath(filepath.Base(prog)); err != nil && !errors.Is(err, exec.ErrDot) {
				r.Skip = fmt.Sprintf("%s is not installed here", filepath.Base(prog))
				return r
			}
		}
	}
	if opt != nil && opt.Waiting != nil {
		o, say := *opt, opt.Waiting
		o.Waiting = func(what string, waited time.Duration) { say(path+": "+what, waited) }
		opt = &o
	}
	r.Outcome = Replay(ctx, rec, opt)
	r.Elapsed = time.Since(start)
	return r
}

// ParseShard reads K/N (1 ≤ K ≤ N); 1/1 when empty.
func ParseShard(s string) (k, n int, err error) {
	if s == "" {
		return 1, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return 0, 0, fmt.Errorf("--shard %q: want K/N with 1 ≤ K ≤ N, for example 2/4", s)
	}
	return k, n, nil
}

// Shard keeps the tapes of shard k of n: a tape's shard follows from its
// path alone (FNV-1a), so adding a tape never moves the others.
func Shard(tapes []string, k, n int) []string {
	if n == 1 {
		return tapes
	}
	var out []string
	for _, t := range tapes {
		h := fnv.New32a()
		h.Write([]byte(filepath.ToSlash(filepath.Clean(t))))
		if int(h.Sum32()%uint32(n)) == k-1 {
			out = append(out, t)
		}
	}
	return out
}

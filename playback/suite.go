package playback

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tapedeck/tapedeck/internal/inorder"
)

// TapeResult is one tape of a suite: replayed, or skipped and why.
type TapeResult struct {
	Tape    string
	Outcome *Outcome // nil when skipped
	Skip    string   // why it was skipped ("" when it ran)
	Elapsed time.Duration
	// Pending is the change written beside the tape for review, by
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
	// Update, when set, is called with the outcome of each tape that is
	// not the same, on the goroutine that replayed it: test --update
	// writes its live run beside the tape for review (see
	// internal/pending). What it returns is the result's Pending and
	// UpdateErr.
	Update func(*Outcome) (pending string, err error)
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
		if opt.Update != nil && r.Outcome != nil && !r.Outcome.Same() {
			r.Pending, r.UpdateErr = opt.Update(r.Outcome)
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
	_, err := inorder.Run(ctx, len(tapes), max(opt.Jobs, 1), replay, report)
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

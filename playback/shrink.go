package playback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/shrink"
	"github.com/tapedeck/tapedeck/tape"
)

// ErrNothingToShrink is wrapped by Shrink's error when the whole recording
// does not fail the way asked: there is nothing to shrink.
var ErrNothingToShrink = errors.New("nothing to shrink")

// ShrinkOptions say what Shrink chases and how.
type ShrinkOptions struct {
	// Replay is how each candidate is replayed. A zero StepTimeout is
	// taken from the whole replay (4 × its longest wait, 1 to 30 s).
	Replay Options
	// Predicate, when set, says what fails instead of the first
	// difference; Exec, when set, is a command run by sh with the
	// candidate tape's path in $TAPE that fails it by exiting 0.
	Predicate *shrink.Predicate
	Exec      string
	Jobs      int // replays at once; 0: 1
	MaxRuns   int // candidates at most; 0: shrink's default
	// Output is the file the smallest failing tape is written to; "" writes
	// it to Stdout.
	Output string
	Stdout io.Writer
	// OnStart is told what is chased once the whole recording failed;
	// Progress how far the search is; Searched that the search is over.
	OnStart  func(ShrinkStart)
	Progress func(shrink.Progress)
	Searched func()
}

// ShrinkStart is what a shrink chases, once known.
type ShrinkStart struct {
	Steps int    // host steps that may go
	Kept  int    // steps always kept (initialize and the ending)
	Chase string // what failing means
	// StepTimeout is the step timeout of the candidates when it was
	// taken from the whole replay (0 when given).
	StepTimeout time.Duration
	// Replays run before the search.
	Replays int
}

// ShrinkResult is the smallest failing tape found.
type ShrinkResult struct {
	Steps   int      // host steps of the recording
	Left    int      // host steps left
	Runs    int      // replays run in all
	Kept    []string // the steps kept, "WHAT (seq N)"
	Bounded bool     // stopped at MaxRuns
	Elapsed time.Duration
}

// fails decides whether one candidate still fails the way chased.
type fails func(ctx context.Context, frames []frame.Frame) (bool, error)

// Shrink removes host steps from rec (delta debugging) while a replay
// still fails the same way, and writes the smallest failing tape.
func Shrink(ctx context.Context, rec *Recording, opt *ShrinkOptions) (*ShrinkResult, error) {
	start := time.Now()
	t := shrink.Split(rec.Frames)
	ro := opt.Replay
	var test fails
	var chase string
	derived := time.Duration(0)
	switch {
	case opt.Exec != "":
		test = execTest(rec, opt.Exec, opt.Replay.Env)
		ok, err := test(ctx, rec.Frames)
		if err != nil {
			return nil, fmt.Errorf("shrink %s: %v", rec.Name, err)
		}
		if !ok {
			return nil, fmt.Errorf("shrink %s: --exec %q does not succeed on the whole tape: %w", rec.Name, opt.Exec, ErrNothingToShrink)
		}
		chase = fmt.Sprintf("--exec %s", opt.Exec)
	default:
		first := Replay(ctx, rec, &ro)
		if first.Err != nil {
			return nil, fmt.Errorf("shrink %s: %v", rec.Name, first.Err)
		}
		if ro.StepTimeout == 0 {
			ro.StepTimeout = stepTimeoutFrom(first.Run.Live)
			derived = ro.StepTimeout
		}
		if pred := opt.Predicate; pred != nil {
			if !pred.Eval(factsOf(first)) {
				return nil, fmt.Errorf("shrink %s: the whole tape's replay does not satisfy --predicate %s: %w", rec.Name, pred, ErrNothingToShrink)
			}
			chase = "--predicate " + pred.String()
			test = replayTest(rec, &ro, func(o *Outcome) bool { return pred.Eval(factsOf(o)) })
			break
		}
		if first.Diff.Same() {
			return nil, fmt.Errorf("shrink %s: the replay shows no difference: %w (--predicate or --exec chase other failures)", rec.Name, ErrNothingToShrink)
		}
		tg := targetOf(first.Diff.Differences[0])
		chase = tg.String() + " (the first difference)"
		test = replayTest(rec, &ro, tg.in)
	}
	runs := 1
	if opt.OnStart != nil {
		opt.OnStart(ShrinkStart{Steps: t.Steps(), Kept: len(t.Units()) - t.Steps(), Chase: chase, StepTimeout: derived, Replays: runs})
	}
	res, err := shrink.Minimize(ctx, t.Steps(), func(ctx context.Context, keep []int) (bool, error) {
		return test(ctx, t.Keep(keep))
	}, shrink.Options{Jobs: max(opt.Jobs, 1), MaxRuns: opt.MaxRuns, Progress: opt.Progress})
	if opt.Searched != nil {
		opt.Searched()
	}
	if err != nil {
		return nil, fmt.Errorf("shrink %s: %v", rec.Name, err)
	}
	runs += res.Runs
	frames := t.Keep(res.Keep)
	if opt.Exec == "" {
		var n int
		frames, n = prune(ctx, rec, &ro, frames, test)
		runs += n
	}
	if err := writeShrunk(opt.Stdout, opt.Output, rec, frames); err != nil {
		return nil, fmt.Errorf("shrink %s: %v", rec.Name, err)
	}
	out := &ShrinkResult{Steps: t.Steps(), Left: len(res.Keep), Runs: runs, Bounded: res.Bounded, Elapsed: time.Since(start)}
	for _, k := range res.Keep {
		u := t.Step(k)
		out.Kept = append(out.Kept, fmt.Sprintf("%s (seq %d)", u.What, u.Seq))
	}
	return out, nil
}

// prune drops from frames what the plugin said in the recording for the
// steps that are gone: plugin frames the shrunk session's replay reports
// missing (a recording where the host wrote ahead of the plugin credits
// them all to the last step). The pruned tape is kept only if it still
// fails; n is the replays it took.
func prune(ctx context.Context, rec *Recording, opt *Options, frames []frame.Frame, test fails) (_ []frame.Frame, n int) {
	meta := *rec.Meta
	meta.Fingerprint = nil
	cand := *rec
	cand.Meta, cand.Frames = &meta, frames
	o := Replay(ctx, &cand, opt)
	if o.Err != nil {
		return frames, 1
	}
	drop := map[uint64]bool{}
	for _, d := range o.Diff.Differences {
		if d.Kind == diff.Missing && d.Recorded != nil {
			drop[d.Recorded.Seq] = true
		}
	}
	if len(drop) == 0 {
		return frames, 1
	}
	var pruned []frame.Frame
	for _, f := range frames {
		if f.IsEvent() || f.Dir == frame.In || !drop[f.Seq] {
			pruned = append(pruned, f)
		}
	}
	if ok, err := test(ctx, pruned); err != nil || !ok {
		return frames, 2
	}
	return pruned, 2
}

// replayTest replays a candidate as replay would (the same command,
// settings and ignore rules) and asks ok of the outcome.
func replayTest(rec *Recording, opt *Options, ok func(*Outcome) bool) fails {
	meta := *rec.Meta
	meta.Fingerprint = nil // drift is not what is chased
	return func(ctx context.Context, frames []frame.Frame) (bool, error) {
		cand := *rec
		cand.Meta, cand.Frames = &meta, frames
		o := Replay(ctx, &cand, opt)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if o.Err != nil {
			return false, o.Err
		}
		return ok(o), nil
	}
}

// execTest writes each candidate as a tape in a folder of its own and runs
// cmd with sh in env (nil: ours), the tape's path in $TAPE.
func execTest(rec *Recording, cmd string, env []string) fails {
	if env == nil {
		env = os.Environ()
	}
	return func(ctx context.Context, frames []frame.Frame) (bool, error) {
		dir, err := os.MkdirTemp("", "tapedeck-shrink-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "candidate.jsonl")
		if err := writeShrunk(nil, path, rec, frames); err != nil {
			return false, err
		}
		sh := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
		sh.Env = append(env[:len(env):len(env)], "TAPE="+path)
		err = sh.Run()
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("--exec: %w", err)
		}
		return true, nil
	}
}

// stepTimeoutFrom is the step timeout for the candidates: 4 × the longest
// time the whole replay waited between two host frames (at least 1 s, at
// most 30 s), so that a candidate whose plugin never says what a step waits
// for costs seconds, not the default 30 s, while a plugin that takes its
// time is still waited for.
func stepTimeoutFrom(live []frame.Frame) time.Duration {
	var longest, last int64
	for _, f := range live {
		if !f.IsEvent() && f.Dir == frame.In {
			longest = max(longest, f.At-last)
			last = f.At
		}
	}
	return min(max(4*time.Duration(longest), time.Second), 30*time.Second).Round(time.Millisecond)
}

// target is the failure chased by default: a difference at a method and,
// for a changed frame, at a path.
type target struct {
	kind   diff.Kind
	method string
	path   string
}

func targetOf(d diff.Difference) target {
	t := target{kind: d.Kind, method: d.Method}
	if d.Kind == diff.Changed && len(d.Changes) > 0 {
		t.path = d.Changes[0].Path
	}
	return t
}

func (t target) String() string {
	method := t.method
	if method == "" {
		method = "*"
	}
	s := string(t.kind) + " " + method
	if t.path != "" {
		s += " at " + t.path
	}
	return s
}

// in reports whether a replay shows the same failure.
func (t target) in(o *Outcome) bool {
	for _, d := range o.Diff.Differences {
		if d.Method != t.method {
			continue
		}
		if t.path == "" {
			if d.Kind == t.kind {
				return true
			}
			continue
		}
		for _, ch := range d.Changes {
			if ch.Path == t.path {
				return true
			}
		}
	}
	return false
}

func factsOf(o *Outcome) *shrink.Facts {
	f := &shrink.Facts{Diff: &o.Diff, TimedOut: o.Run.TimedOut, Unmatched: o.Run.Unmatched}
	for _, l := range o.Run.Live {
		switch {
		case l.Event == frame.EventExit:
			f.Code, f.Signal = l.Code, l.Signal
		case !l.IsEvent() && l.Dir == frame.Err:
			f.Stderr = append(f.Stderr, string(l.Raw))
		}
	}
	return f
}

// writeShrunk writes frames as a tape of their own to path (atomically),
// or to w when path is "": the recording's metadata with a new id, the
// counts of what is left, a shrunk-from tag, and a working directory that
// still names the plugin's folder from where the tape now is.
func writeShrunk(w io.Writer, path string, rec *Recording, frames []frame.Frame) error {
	meta := *rec.Meta
	meta.ID = frame.NewID(time.Now())
	meta.Tags = map[string]string{}
	for k, v := range rec.Meta.Tags {
		meta.Tags[k] = v
	}
	meta.Tags["shrunk-from"] = rec.Meta.ID
	meta.Frames, meta.Bytes = frame.Counts{}, frame.Counts{}
	for _, f := range frames {
		if !f.IsEvent() {
			meta.Frames.Add(f.Dir, 1)
			n := int64(len(f.Raw))
			if f.Cut != nil {
				n = f.Cut.Len
			}
			meta.Bytes.Add(f.Dir, n)
		}
	}
	if meta.Cwd != "" && !filepath.IsAbs(meta.Cwd) && rec.TapePath != "" {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(rec.TapePath), meta.Cwd))
		if err != nil {
			return err
		}
		meta.Cwd = abs
		if path != "" {
			if to, err := filepath.Abs(filepath.Dir(path)); err == nil {
				if rel, err := filepath.Rel(to, abs); err == nil {
					meta.Cwd = rel
				}
			}
		}
	}
	write := func(w io.Writer) error {
		tw, err := tape.NewWriter(w, &meta)
		if err != nil {
			return err
		}
		for i := range frames {
			if err := tw.Write(&frames[i]); err != nil {
				return err
			}
		}
		return tw.Flush()
	}
	if path == "" {
		return write(w)
	}
	return atomicfile.Write(path, write)
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/cli/internal/screen"
	"github.com/tapedeck/tapedeck/diff"
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/shrink"
	"github.com/tapedeck/tapedeck/tape"
)

func (e *env) shrinkCommand() *cli.Command {
	return &cli.Command{
		Name:      "shrink",
		Usage:     "find a smaller session that still fails the same way",
		ArgsUsage: "TAPE|SESSION [-o OUT] [-- COMMAND [ARGS…]]",
		Description: "Replays the tape, takes its first difference (method and path) as the\n" +
			"failure, and removes host steps (delta debugging) while a replay still\n" +
			"shows it: initialize and the final shutdown and stdin close stay, an\n" +
			"answer goes with the request it answers, and what the plugin said goes\n" +
			"with the step that caused it. --predicate EXPR or --exec CMD say what\n" +
			"\"fails\" means instead. Progress goes to stderr; the smallest failing tape\n" +
			"to -o (or stdout). The command after -- is as for replay.\n\n" +
			"Predicates: differs, differs(\"M\"), changed(\"M:PATH\"), missing(\"M\"),\n" +
			"extra(\"M\"), moved(\"M\"), stderr(\"RE\"), unanswered(\"M\"), signal(\"SIGTERM\"),\n" +
			"exit == N, exit != N, timedout; with !, &&, || and parentheses.\n" +
			"Exit status: 0 a failing tape was written, 1 the tape does not fail,\n" +
			"2 could not run.",
		Flags: append(replayFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the smallest failing tape to `FILE` (default stdout)"},
			&cli.StringFlag{Name: "cwd", Usage: "working directory for the plugin (with a command after --)"},
			&cli.StringFlag{Name: "predicate", Usage: "a candidate fails when `EXPR` holds for its replay (see above)"},
			&cli.StringFlag{Name: "exec", Usage: "a candidate fails when `CMD`, run by sh with the candidate tape's path in $TAPE, exits 0"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "run `N` replays at once"},
			&cli.IntFlag{Name: "max-runs", Value: 400, Usage: "replay at most `N` candidates, then keep the smallest failing one found"},
		),
		BashComplete: e.complete(completeSessions),
		Action:       e.shrink,
	}
}

// fails decides whether one candidate still fails the way chased.
type fails func(ctx context.Context, frames []frame.Frame) (bool, error)

func (e *env) shrink(c *cli.Context) error {
	if c.NArg() < 1 {
		return fail(2, "shrink needs a TAPE or SESSION (see tapedeck shrink --help)")
	}
	args := c.Args().Slice()
	argv := args[1:]
	if len(argv) > 0 && argv[0] != "--" {
		return fail(2, "shrink: extra argument %q: a command to run instead of the recorded one goes after --: tapedeck shrink TAPE|SESSION -- COMMAND [ARGS…]", argv[0])
	}
	if len(argv) > 0 {
		argv = argv[1:]
	}
	if c.IsSet("predicate") && c.IsSet("exec") {
		return fail(2, "shrink: --predicate and --exec do not go together; pick one")
	}
	var pred *shrink.Predicate
	if c.IsSet("predicate") {
		var err error
		if pred, err = shrink.ParsePredicate(c.String("predicate")); err != nil {
			return fail(2, "shrink: --predicate %q: %v", c.String("predicate"), err)
		}
	}
	s, err := settingsFrom(c, argv)
	if err != nil {
		return fail(2, "%v", err)
	}
	src, err := e.loadSource(c, args[0])
	if err != nil {
		return fail(2, "%v", err)
	}
	out := c.String("output")
	start := time.Now()
	t := shrink.Split(src.frames)

	// Replay the whole tape once: it must fail, and it tells what to chase.
	var test fails
	var chase string
	runs := 1
	switch {
	case c.IsSet("exec"):
		test = e.execTest(src, c.String("exec"))
		ok, err := test(c.Context, src.frames)
		if err != nil {
			return fail(2, "shrink %s: %v", src.name, err)
		}
		if !ok {
			return fail(1, "shrink %s: --exec %q does not succeed on the whole tape: nothing to shrink", src.name, c.String("exec"))
		}
		chase = fmt.Sprintf("--exec %s", c.String("exec"))
	default:
		first := replayOnce(c, src, s)
		if first.err != nil {
			return fail(2, "shrink %s: %v", src.name, first.err)
		}
		if !c.IsSet("step-timeout") {
			s.opts.StepTimeout = stepTimeoutFrom(first.run.Live)
		}
		if pred != nil {
			if !pred.Eval(factsOf(first)) {
				return fail(1, "shrink %s: the whole tape's replay does not satisfy --predicate %s: nothing to shrink", src.name, pred)
			}
			chase = "--predicate " + pred.String()
			test = e.replayTest(c, src, s, func(o *outcome) bool { return pred.Eval(factsOf(o)) })
			break
		}
		if first.diff.Same() {
			return fail(1, "shrink %s: the replay shows no difference: nothing to shrink (--predicate or --exec chase other failures)", src.name)
		}
		tg := targetOf(first.diff.Differences[0])
		chase = tg.String() + " (the first difference)"
		test = e.replayTest(c, src, s, tg.in)
	}
	fmt.Fprintf(e.stderr, "tapedeck: shrink %s: %d host steps (%d kept: initialize and the ending); chasing %s\n",
		escape.Text(src.name), t.Steps(), len(t.Units())-t.Steps(), escape.Text(chase))
	if !c.IsSet("step-timeout") && !c.IsSet("exec") {
		fmt.Fprintf(e.stderr, "tapedeck: shrink: --step-timeout %v (4 × the longest wait of the whole replay)\n", s.opts.StepTimeout)
	}

	prog := newProgress(e.stderr, t.Steps(), runs)
	res, err := shrink.Minimize(c.Context, t.Steps(), func(ctx context.Context, keep []int) (bool, error) {
		return test(ctx, t.Keep(keep))
	}, shrink.Options{Jobs: max(c.Int("jobs"), 1), MaxRuns: c.Int("max-runs"), Progress: prog.update})
	prog.end()
	if err != nil {
		return fail(2, "shrink %s: %v", src.name, err)
	}
	runs += res.Runs
	frames := t.Keep(res.Keep)
	if !c.IsSet("exec") {
		var n int
		frames, n = e.prune(c, src, s, frames, test)
		runs += n
	}
	if err := writeShrunk(e.stdout, out, src, frames); err != nil {
		return fail(2, "shrink %s: %v", src.name, err)
	}
	var kept []string
	for _, k := range res.Keep {
		u := t.Step(k)
		kept = append(kept, fmt.Sprintf("%s (seq %d)", u.What, u.Seq))
	}
	elapsed := time.Since(start)
	where := out
	if where == "" {
		where = "stdout"
	}
	fmt.Fprintf(e.stderr, "tapedeck: shrink: %d of %d host steps left after %d replays in %s (%.0f replays/min); wrote %s\n",
		len(res.Keep), t.Steps(), runs, formatDuration(elapsed), float64(runs)/elapsed.Minutes(), escape.Text(where))
	if len(kept) > 0 {
		fmt.Fprintf(e.stderr, "  kept: %s\n", escape.Text(strings.Join(kept, ", ")))
	}
	if res.Bounded {
		fmt.Fprintf(e.stderr, "tapedeck: shrink: stopped at --max-runs %d; the tape may shrink further\n", c.Int("max-runs"))
	}
	return nil
}

// prune drops from frames what the plugin said in the recording for the
// steps that are gone: plugin frames the shrunk session's replay reports
// missing (a recording where the host wrote ahead of the plugin credits
// them all to the last step). The pruned tape is kept only if it still
// fails; n is the replays it took.
func (e *env) prune(c *cli.Context, src *source, s *replaySettings, frames []frame.Frame, test fails) (_ []frame.Frame, n int) {
	meta := *src.meta
	meta.Fingerprint = nil
	cand := *src
	cand.meta, cand.frames = &meta, frames
	o := replayOnce(c, &cand, s)
	if o.err != nil {
		return frames, 1
	}
	drop := map[uint64]bool{}
	for _, d := range o.diff.Differences {
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
	if ok, err := test(c.Context, pruned); err != nil || !ok {
		return frames, 2
	}
	return pruned, 2
}

// replayTest replays a candidate as replay would (the same command,
// settings and ignore rules) and asks ok of the outcome.
func (e *env) replayTest(c *cli.Context, src *source, s *replaySettings, ok func(*outcome) bool) fails {
	meta := *src.meta
	meta.Fingerprint = nil // drift is not what is chased
	return func(ctx context.Context, frames []frame.Frame) (bool, error) {
		cand := *src
		cand.meta, cand.frames = &meta, frames
		cc := *c
		cc.Context = ctx
		o := replayOnce(&cc, &cand, s)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if o.err != nil {
			return false, o.err
		}
		return ok(o), nil
	}
}

// execTest writes each candidate as a tape in a folder of its own and runs
// cmd with sh, the tape's path in $TAPE.
func (e *env) execTest(src *source, cmd string) fails {
	return func(ctx context.Context, frames []frame.Frame) (bool, error) {
		dir, err := os.MkdirTemp("", "tapedeck-shrink-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "candidate.jsonl")
		if err := writeShrunk(nil, path, src, frames); err != nil {
			return false, err
		}
		sh := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
		sh.Env = append(os.Environ(), "TAPE="+path)
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
	s := string(t.kind) + " " + orAny(t.method)
	if t.path != "" {
		s += " at " + t.path
	}
	return s
}

// in reports whether a replay shows the same failure.
func (t target) in(o *outcome) bool {
	for _, d := range o.diff.Differences {
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

func factsOf(o *outcome) *shrink.Facts {
	f := &shrink.Facts{Diff: &o.diff, TimedOut: o.run.TimedOut, Unmatched: o.run.Unmatched}
	for _, l := range o.run.Live {
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
// or to w when path is "": the source's metadata with a new id, the counts
// of what is left, a shrunk-from tag, and a working directory that still
// names the plugin's folder from where the tape now is.
func writeShrunk(w io.Writer, path string, src *source, frames []frame.Frame) error {
	meta := *src.meta
	meta.ID = frame.NewID(time.Now())
	meta.Tags = map[string]string{}
	for k, v := range src.meta.Tags {
		meta.Tags[k] = v
	}
	meta.Tags["shrunk-from"] = src.meta.ID
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
	if meta.Cwd != "" && !filepath.IsAbs(meta.Cwd) && src.tapePath != "" {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(src.tapePath), meta.Cwd))
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
	return writeFileAtomic(path, write)
}

// progress prints where a shrink stands on stderr: one line that rewrites
// itself on a terminal, a line per reduction otherwise.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	total int
	base  int // replays run before the search
	left  int
}

func newProgress(w io.Writer, total, base int) *progress {
	return &progress{w: w, tty: screen.Color(w), total: total, base: base, left: total}
}

func (p *progress) update(pr shrink.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[Ktapedeck: shrink: %d of %d steps left, %d replays run", pr.Left, p.total, p.base+pr.Runs)
	case pr.Left != p.left:
		fmt.Fprintf(p.w, "tapedeck: shrink: %d of %d steps left, %d replays run\n", pr.Left, p.total, p.base+pr.Runs)
	}
	p.left = pr.Left
}

func (p *progress) end() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

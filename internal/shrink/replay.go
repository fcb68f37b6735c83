package shrink

// The driver: a recording made smaller by replaying candidates of it (Run).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/message"
	"github.com/tapedeck/tapedeck/playback"
	"github.com/tapedeck/tapedeck/tape"
)

// ErrNothingToShrink is wrapped by Run's error when the whole recording
// does not fail the way asked: there is nothing to shrink.
var ErrNothingToShrink = errors.New("nothing to shrink")

// RunOptions say what Run chases and how.
type RunOptions struct {
	// Replay is how each candidate is replayed. A zero StepTimeout is
	// taken from the whole replay (4 × its longest wait, 1 to 30 s).
	Replay playback.Options
	// Predicate, when set, says what fails instead of the first
	// difference; Exec, when set, is a command run by sh with the
	// candidate tape's path in $TAPE that fails it by exiting 0.
	Predicate *Predicate
	Exec      string
	Jobs      int // replays at once; 0: 1
	MaxRuns   int // candidates at most; 0: shrink's default
	// Output is the file the smallest failing tape is written to; "" writes
	// it to Stdout.
	Output string
	Stdout io.Writer
	// OnStart is told what is chased once the whole recording failed;
	// Progress how far the search is; Searched that the search is over.
	OnStart  func(Start)
	Progress func(Progress)
	Searched func()
}

// Start is what a shrink chases, once known.
type Start struct {
	Steps int    // host steps that may go
	Kept  int    // steps always kept (initialize and the ending)
	Chase string // what failing means
	// StepTimeout is the step timeout of the candidates when it was
	// taken from the whole replay (0 when given).
	StepTimeout time.Duration
	// Replays run before the search.
	Replays int
}

// KeptListed is how many kept steps a Shrunk names.
const KeptListed = 10

// Shrunk is the smallest failing tape found.
type Shrunk struct {
	Steps int // host steps of the recording
	Left  int // host steps left
	Runs  int // replays run in all
	// Kept names the first steps kept, "WHAT (seq N)", at most
	// KeptListed of them; KeptMore counts the others.
	Kept     []string
	KeptMore int
	Bounded  bool // stopped at MaxRuns
	Elapsed  time.Duration
}

// fails decides whether one candidate still fails the way chased.
type fails func(ctx context.Context, frames []frame.Frame) (bool, error)

// Run removes host steps from rec (delta debugging: Minimize over the
// steps of Split) while a replay still fails the same way, and writes the
// smallest failing tape.
func Run(ctx context.Context, rec *playback.Recording, opt *RunOptions) (*Shrunk, error) {
	start := time.Now()
	// The recording is split once the whole replay is over, so that the
	// split and that replay's live run are not held at once.
	var t *Tape
	ro := opt.Replay
	var test fails
	var chase string
	// keep are the recorded frames compared even where they were pooled
	// and the live plugin did not say them (see settle).
	var keep map[uint64]bool
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
		first := playback.Replay(ctx, rec, &ro)
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
			keep = map[uint64]bool{}
			for _, d := range first.Diff.Differences {
				if d.Recorded != nil {
					keep[d.Recorded.Seq] = true
				}
			}
			t = Split(rec.Frames, lifecycle(rec))
			test = replayTest(rec, &ro, t, keep, func(o *playback.Outcome) bool { return pred.Eval(factsOf(o)) })
			break
		}
		if first.Diff.Same() {
			return nil, fmt.Errorf("shrink %s: the replay shows no difference: %w (--predicate or --exec chase other failures)", rec.Name, ErrNothingToShrink)
		}
		tg := targetOf(first.Diff.Differences[0])
		chase = tg.String() + " (the first difference)"
		keep = map[uint64]bool{tg.seq: tg.seq != 0}
		t = Split(rec.Frames, lifecycle(rec))
		// A regression test: the candidate shows the difference chased,
		// and none that the whole replay did not (a step gone whose state
		// later frames show: the unchanged plugin would fail it too).
		whole := targetSet(first.Diff.Differences)
		test = replayTest(rec, &ro, t, keep, func(o *playback.Outcome) bool { return tg.in(o) && onlyOf(o, whole) })
	}
	if t == nil {
		t = Split(rec.Frames, lifecycle(rec))
	}
	runs := 1
	if opt.OnStart != nil {
		opt.OnStart(Start{Steps: t.Steps(), Kept: len(t.Units()) - t.Steps(), Chase: chase, StepTimeout: derived, Replays: runs})
	}
	res, err := Minimize(ctx, t.Steps(), func(ctx context.Context, keep []int) (bool, error) {
		return test(ctx, t.Keep(keep))
	}, Options{Jobs: max(opt.Jobs, 1), MaxRuns: opt.MaxRuns, Progress: opt.Progress})
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
		frames, n = prune(ctx, rec, &ro, frames, test, t, keep)
		runs += n
	}
	if err := writeShrunk(opt.Stdout, opt.Output, rec, frames); err != nil {
		return nil, fmt.Errorf("shrink %s: %v", rec.Name, err)
	}
	out := &Shrunk{Steps: t.Steps(), Left: len(res.Keep), Runs: runs, Bounded: res.Bounded, Elapsed: time.Since(start)}
	for i, k := range res.Keep {
		if i == KeptListed {
			out.KeptMore = len(res.Keep) - i
			break
		}
		u := t.Step(k)
		out.Kept = append(out.Kept, fmt.Sprintf("%s (seq %d)", u.What, u.Seq))
	}
	return out, nil
}

// prune drops from frames what the plugin said in the recording for the
// steps that are gone: the frames pooled over steps the host wrote ahead
// of the plugin that the shrunk session's plugin does not say (with the
// host's answers to the requests among them), and the plugin frames its
// replay then reports missing, but for the frames keep names (those of
// the chased difference). The pruned tape is kept only if it still fails;
// n is the replays it took.
func prune(ctx context.Context, rec *playback.Recording, opt *playback.Options, frames []frame.Frame, test fails, t *Tape, keep map[uint64]bool) (_ []frame.Frame, n int) {
	meta := *rec.Meta
	meta.Fingerprint = nil
	cand := *rec
	cand.Meta, cand.Frames = &meta, frames
	o := playback.Replay(ctx, &cand, opt)
	if o.Err != nil {
		return frames, 1
	}
	settled := settle(o, frames, t, keep)
	res := o.Diff
	if len(settled) != len(frames) {
		res = o.Recompare(settled)
	}
	drop := map[uint64]bool{}
	for _, f := range frames {
		drop[f.Seq] = true
	}
	for _, f := range settled {
		delete(drop, f.Seq)
	}
	for _, d := range res.Differences {
		if d.Kind == diff.Missing && d.Recorded != nil && !keep[d.Recorded.Seq] {
			drop[d.Recorded.Seq] = true
		}
	}
	if len(drop) == 0 {
		return frames, 1
	}
	pruned := dropWithAnswers(frames, drop)
	if ok, err := test(ctx, pruned); err != nil || !ok {
		return frames, 2
	}
	return pruned, 2
}

// dropWithAnswers is frames less the plugin frames drop names and the
// host's answers to the requests among them. Host frames and events stay.
func dropWithAnswers(frames []frame.Frame, drop map[uint64]bool) []frame.Frame {
	unanswered := map[string]int{} // dropped plugin request ids → how many
	var out []frame.Frame
	for _, f := range frames {
		switch {
		case f.IsEvent():
		case f.Dir == frame.In:
			if e := message.ReadEnvelope(f.Raw); e.Kind.IsReply() && unanswered[message.IDKey(e.ID)] > 0 {
				unanswered[message.IDKey(e.ID)]--
				continue
			}
		case drop[f.Seq]:
			if e := message.ReadEnvelope(f.Raw); e.Kind == message.Request {
				unanswered[message.IDKey(e.ID)]++
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// settle is frames (a candidate) less the frames pooled over steps the
// host wrote ahead of the plugin (see shrink.Tape.Pooled) that the live
// plugin of o did not say: those were caused by a step that is gone, and
// to compare them would pair what the plugin said with what another step
// made it say. The frames keep names stay: the chased difference's, or
// for a predicate every frame that differed in the whole replay (what a
// predicate may be about). What is left is frames itself when nothing
// goes.
func settle(o *playback.Outcome, frames []frame.Frame, t *Tape, keep map[uint64]bool) []frame.Frame {
	if t == nil {
		return frames
	}
	pooled := false
	for _, f := range frames {
		pooled = pooled || t.Pooled(f.Seq)
	}
	if !pooled {
		return frames
	}
	mask := o.DiffOptions.Mask
	said := map[string]int{}
	for _, f := range o.Filtered(o.Compared()) {
		if !f.IsEvent() && f.Dir != frame.In {
			said[frameKey(&f, mask)]++
		}
	}
	filtered := o.Filtered(frames)
	for i := range filtered {
		f := &filtered[i]
		if !f.IsEvent() && f.Dir != frame.In && !t.Pooled(f.Seq) {
			said[frameKey(f, mask)]--
		}
	}
	drop := map[uint64]bool{}
	for i := range filtered {
		f := &filtered[i]
		if f.IsEvent() || f.Dir == frame.In || !t.Pooled(f.Seq) || keep[f.Seq] {
			continue
		}
		if k := frameKey(f, mask); said[k] > 0 {
			said[k]--
			continue
		}
		drop[f.Seq] = true
	}
	if len(drop) == 0 {
		return frames
	}
	return dropWithAnswers(frames, drop)
}

// frameKey is what a plugin frame says, for telling whether two say the
// same: its JSON value with members sorted and a request's id left out
// (the plugin's ids are its own), else its text.
func frameKey(f *frame.Frame, mask func(string) string) string {
	raw := string(bytes.TrimSuffix(f.Raw, []byte("\r")))
	if mask != nil {
		raw = mask(raw)
	}
	if f.Dir == frame.Err {
		return "err:" + raw
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return "raw:" + raw
	}
	if obj, ok := v.(map[string]any); ok {
		if _, call := obj["method"]; call {
			delete(obj, "id")
		}
	}
	b, _ := json.Marshal(v)
	return "json:" + string(b)
}

// replayTest replays a candidate as replay would (the same command,
// settings, ignore rules and filters) and asks ok of the outcome, once
// the frames pooled over steps of t that the plugin did not say are out of
// the comparison (see settle).
func replayTest(rec *playback.Recording, opt *playback.Options, t *Tape, keep map[uint64]bool, ok func(*playback.Outcome) bool) fails {
	meta := *rec.Meta
	meta.Fingerprint = nil // drift is not what is chased
	return func(ctx context.Context, frames []frame.Frame) (bool, error) {
		cand := *rec
		cand.Meta, cand.Frames = &meta, frames
		o := playback.Replay(ctx, &cand, opt)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if o.Err != nil {
			return false, o.Err
		}
		if settled := settle(o, frames, t, keep); len(settled) != len(frames) {
			o.Diff = o.Recompare(settled)
		}
		return ok(o), nil
	}
}

// execTest writes each candidate as a tape in a folder of its own and runs
// cmd with sh in env (nil: ours), the tape's path in $TAPE.
func execTest(rec *playback.Recording, cmd string, env []string) fails {
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

// target is the failure chased by default: the same difference as the
// whole replay's first, which is the same kind at the same method and,
// for a changed frame, at the same path with the same recorded and live
// values there (after ignore rules and filters); for a missing, moved or
// extra frame the same frame, for an exit the same exits.
type target struct {
	kind   diff.Kind
	method string
	path   string
	// at is the path's segments, joined by NUL: what a change is matched
	// by, as its spelled path is cut where it is long (diff.Change.Path)
	// and two long ones may spell alike.
	at string
	// old and new are the recorded and the live value at path (JSON, ""
	// when absent), or the recorded and the live frame when there is no
	// path.
	old, new string
	what     string // an exit difference's
	seq      uint64 // the recorded frame's seq (0 when it has none)
}

func targetOf(d diff.Difference) target {
	if d.Kind != diff.Changed || len(d.Changes) == 0 {
		return targetAt(d, 0, decoded{}, decoded{})
	}
	return targetAt(d, 0, decodeSide(d.Recorded), decodeSide(d.Live))
}

// targetAt is the target of difference d at its change i (for a changed
// frame), rec and live its sides decoded (see decodeSide): a difference
// of many changes is a target for each, and decoding its frames again
// for each took the square of them.
func targetAt(d diff.Difference, i int, rec, live decoded) target {
	t := target{kind: d.Kind, method: d.Method}
	if d.Recorded != nil && d.Kind != diff.Exit {
		t.seq = d.Recorded.Seq
	}
	switch {
	case d.Kind == diff.Exit:
		t.what = d.What
	case d.Kind == diff.Changed && i < len(d.Changes):
		c := d.Changes[i]
		t.path, t.at = c.Path, strings.Join(c.Segments, "\x00")
		t.old, t.new = rec.valueAt(c.Segments), live.valueAt(c.Segments)
	default:
		t.old, t.new = sideContent(d.Recorded), sideContent(d.Live)
	}
	return t
}

// String names what is chased: the kind, the method and the path (the
// values it must have there are not spelled: the first difference, shown
// by replay, has them).
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
func (t target) in(o *playback.Outcome) bool {
	for _, d := range o.Diff.Differences {
		if d.Kind != t.kind || d.Method != t.method {
			continue
		}
		switch {
		case t.kind == diff.Exit:
			if d.What == t.what {
				return true
			}
		case t.path != "":
			for _, c := range d.Changes {
				if strings.Join(c.Segments, "\x00") == t.at && decodeSide(d.Recorded).valueAt(c.Segments) == t.old && decodeSide(d.Live).valueAt(c.Segments) == t.new {
					return true
				}
			}
		default:
			if sideContent(d.Recorded) == t.old && sideContent(d.Live) == t.new {
				return true
			}
		}
	}
	return false
}

// targetsOf is every difference of ds as a target: a changed frame one
// for each path that changed.
func targetsOf(ds []diff.Difference) []target {
	var out []target
	for _, d := range ds {
		if d.Kind != diff.Changed || len(d.Changes) < 2 {
			out = append(out, targetOf(d))
			continue
		}
		rec, live := decodeSide(d.Recorded), decodeSide(d.Live)
		for i := range d.Changes {
			out = append(out, targetAt(d, i, rec, live))
		}
	}
	return out
}

// targetSet is the targets of ds wherever their frames stand (seq 0), as a
// set for onlyOf.
func targetSet(ds []diff.Difference) map[target]bool {
	set := map[target]bool{}
	for _, t := range targetsOf(ds) {
		t.seq = 0
		set[t] = true
	}
	return set
}

// onlyOf reports whether every difference of o is one of whole's (see
// targetSet): a shrunk candidate that shows another left out a step the
// rest of the session depends on, and is no regression test (the plugin
// as recorded would fail it too).
func onlyOf(o *playback.Outcome, whole map[target]bool) bool {
	for _, t := range targetsOf(o.Diff.Differences) {
		t.seq = 0 // the same failure wherever the frame now stands
		if !whole[t] {
			return false
		}
	}
	return true
}

// decoded is one side of a difference, its JSON decoded (see
// decodeSide).
type decoded struct {
	v  any
	ok bool // there is a side, and its JSON decoded
}

// decodeSide decodes a side's JSON (nil: no side).
func decodeSide(side *diff.Side) decoded {
	if side == nil {
		return decoded{}
	}
	v, ok := jsonpath.Decode(side.JSON)
	return decoded{v, ok}
}

// valueAt is the value at segs in the side's JSON, spelled as JSON with
// members sorted; "" when it is absent.
func (d decoded) valueAt(segs []string) string {
	if !d.ok {
		return ""
	}
	v, ok := jsonpath.Walk(d.v, segs)
	if !ok {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sideContent is what one side of a difference says: its JSON but for
// its id (which the comparison numbers by order, and so renumbers once
// steps are gone), else its text; "" for no side.
func sideContent(side *diff.Side) string {
	switch {
	case side == nil:
		return ""
	case side.JSON != nil:
		v, ok := jsonpath.Lookup(side.JSON, nil)
		if obj, isObj := v.(map[string]any); ok && isObj {
			delete(obj, "id")
			b, _ := json.Marshal(obj)
			return "json:" + string(b)
		}
		return "json:" + string(side.JSON)
	}
	return "text:" + side.Pretty
}

func factsOf(o *playback.Outcome) *Facts {
	f := &Facts{Diff: &o.Diff, TimedOut: o.Run.TimedOut, Unmatched: o.Run.Unmatched}
	for _, l := range o.Run.Live {
		switch {
		case l.Event == frame.EventExit:
			f.Code, f.Signal = l.Code(), l.Signal()
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
func writeShrunk(w io.Writer, path string, rec *playback.Recording, frames []frame.Frame) error {
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
	write := func(w io.Writer) error { return tape.WriteAll(w, &meta, frames) }
	if path == "" {
		return write(w)
	}
	return atomicfile.Write(path, write)
}

// lifecycle is what the recording's host profile says opens and ends a
// session, for shrink to keep.
func lifecycle(rec *playback.Recording) Lifecycle {
	p := profile.Of(rec.Meta)
	return Lifecycle{Opening: p.Opening, Closing: p.Closing}
}

package shrink

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/replaytest"
	"github.com/tapedeck/tapedeck/playback"
)

func TestMain(m *testing.M) { replaytest.Main(m) }

// panelOf is a files panel notification as a recorded or live frame.
func panelOf(seq uint64, dir frame.Dir, items ...string) frame.Frame {
	var its []string
	for _, it := range items {
		file, tone, _ := strings.Cut(it, "=")
		its = append(its, fmt.Sprintf(`{"file":%q,"tone":%q}`, file, tone))
	}
	return frame.Frame{Seq: seq, Dir: dir, Raw: []byte(replaytest.FilesPanel(its))}
}

// TestTargetIsTheSameDifference: the chased failure is the first
// difference's kind, method, path and its recorded and live values there:
// another item's tone, or the same path with other values, is another
// failure.
func TestTargetIsTheSameDifference(t *testing.T) {
	outcome := func(rec, live frame.Frame) *playback.Outcome {
		return &playback.Outcome{Diff: diff.Frames([]frame.Frame{rec}, []frame.Frame{live}, diff.Options{})}
	}
	first := outcome(panelOf(1, frame.Out, "a=ok", "b=ok"), panelOf(1, frame.Out, "a=ok", "b=bad"))
	tg := targetOf(first.Diff.Differences[0])
	if got, want := tg.String(), "changed ui/setPanel at params.items[1].tone"; got != want {
		t.Errorf("target %q, want %q", got, want)
	}
	for _, c := range []struct {
		rec, live []string
		same      bool
	}{
		{[]string{"a=ok", "b=ok"}, []string{"a=ok", "b=bad"}, true},
		{[]string{"c=ok", "b=ok"}, []string{"d=ok", "b=bad"}, true},    // more differs, the failure is there
		{[]string{"a=ok", "b=ok"}, []string{"a=bad", "b=ok"}, false},   // another item's tone
		{[]string{"a=ok", "c=ok"}, []string{"a=ok", "c=warn"}, false},  // the same path, other values
		{[]string{"a=ok", "c=warn"}, []string{"a=ok", "c=bad"}, false}, // the same live value, another recorded one
		{[]string{"a=ok", "b=ok"}, []string{"a=ok"}, false},            // removed, not changed
	} {
		o := outcome(panelOf(1, frame.Out, c.rec...), panelOf(1, frame.Out, c.live...))
		if got := tg.in(o); got != c.same {
			t.Errorf("%v → %v: same failure %v, want %v", c.rec, c.live, got, c.same)
		}
	}
	missing := &playback.Outcome{Diff: diff.Frames([]frame.Frame{panelOf(3, frame.Out, "a=ok")}, nil, diff.Options{})}
	tm := targetOf(missing.Diff.Differences[0])
	other := &playback.Outcome{Diff: diff.Frames([]frame.Frame{panelOf(3, frame.Out, "b=ok")}, nil, diff.Options{})}
	if !tm.in(missing) || tm.in(other) || tm.seq != 3 {
		t.Errorf("a missing frame: the same %v, another %v, seq %d", tm.in(missing), tm.in(other), tm.seq)
	}
	// A missing request is the same once the requests before it are gone
	// (the comparison numbers them by order).
	req := func(seq uint64, id int, text string) frame.Frame {
		return frame.Frame{Seq: seq, Dir: frame.Out, Raw: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"terminal/send","params":{"text":%q}}`, id, text)}
	}
	whole := &playback.Outcome{Diff: diff.Frames([]frame.Frame{req(4, 1, "ls"), req(6, 2, "pwd")}, []frame.Frame{req(4, 1, "ls")}, diff.Options{})}
	tr := targetOf(whole.Diff.Differences[0])
	shrunk := &playback.Outcome{Diff: diff.Frames([]frame.Frame{req(6, 2, "pwd")}, nil, diff.Options{})}
	if tr.kind != diff.Missing || !tr.in(shrunk) {
		t.Errorf("a missing request (%s) is not the same once the one before it is gone", tr)
	}
}

// filesTape records the files fixture opening x, a, b, c and d, one step
// at a time (each panel follows its replaytest.Click), with every tone ok.
func filesTape(t *testing.T) *playback.Recording {
	lines := []replaytest.Line{replaytest.InitIn, replaytest.InitOut}
	var items []string
	for _, name := range []string{"x", "a", "b", "c", "d"} {
		items = append(items, fmt.Sprintf(`{"file":%q,"tone":"ok"}`, name))
		lines = append(lines, replaytest.Click("open:"+name), "out "+replaytest.FilesPanel(items))
	}
	return replaytest.WriteTape(t, append(lines, replaytest.Shutdown, "eof", "exit")...)
}

// TestShrinkKeepsTheFailure: b's tone is broken (items[2] after x and a)
// and d's tone changed too. A candidate without x and a, where d's tone
// shows at items[2], differs at the same path but is another failure: the
// shrunk tape keeps x, a and b, and replays with b's tone at items[2].
func TestShrinkKeepsTheFailure(t *testing.T) {
	rec := filesTape(t)
	env := replaytest.Env("files", "FIXTURE_BAD=b", "FIXTURE_NEW=d")
	out := filepath.Join(t.TempDir(), "min.jsonl")
	var chase string
	res, err := Run(context.Background(), rec, &RunOptions{
		Replay: playback.Options{Env: env}, Jobs: 1, Output: out,
		OnStart: func(s Start) { chase = s.Chase },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "changed ui/setPanel at params.items[2].tone (the first difference)"; chase != want {
		t.Errorf("chasing %q, want %q", chase, want)
	}
	if got := strings.Join(res.Kept, ", "); got != "ui/event (seq 3), ui/event (seq 5), ui/event (seq 7)" {
		t.Errorf("kept %s (%d of %d steps), want the clicks on x, a and b", got, res.Left, res.Steps)
	}
	min, err := playback.ReadTape(out)
	if err != nil {
		t.Fatal(err)
	}
	o := playback.Replay(context.Background(), min, &playback.Options{Env: env})
	if o.Err != nil || len(o.Diff.Differences) != 1 {
		t.Fatalf("replay of the shrunk tape: %v %+v", o.Err, o.Diff.Differences)
	}
	if c := o.Diff.Differences[0].Changes; len(c) != 1 || c[0].Path != "params.items[2].tone" || c[0].Old != `"ok"` || c[0].New != `"bad"` {
		t.Errorf("the shrunk tape fails with %+v", c)
	}
}

// badgesBatchTape is a recording of the badges fixture made with every
// host line piped at once: the host wrote all of them before the plugin
// said anything, so what the plugin said follows them all.
func badgesBatchTape(t *testing.T) *playback.Recording {
	elements := []string{"e1", "e2", "e3", "e4", "e5", "e6", "fire", "e8", "e9", "e10"}
	lines := []replaytest.Line{replaytest.InitIn}
	for _, el := range elements {
		lines = append(lines, replaytest.Click(el))
	}
	lines = append(lines, replaytest.Shutdown, "eof", replaytest.InitOut)
	for _, el := range elements {
		lines = append(lines, `out {"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"`+el+`"}}`)
	}
	return replaytest.WriteTape(t, append(lines, "exit")...)
}

// TestShrinkBatchRecordingToOneClick: in a batch recording every badge
// follows the last host step; the failure needs the replaytest.Click on fire alone,
// and the shrunk tape keeps only that replaytest.Click and its badge, so that it
// replays clean without the bug and fails the same way with it.
func TestShrinkBatchRecordingToOneClick(t *testing.T) {
	rec := badgesBatchTape(t)
	env := replaytest.Env("badges", "FIXTURE_BUG=1")
	out := filepath.Join(t.TempDir(), "min.jsonl")
	res, err := Run(context.Background(), rec, &RunOptions{Replay: playback.Options{Env: env}, Jobs: 2, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Left != 1 || strings.Join(res.Kept, ", ") != "ui/event (seq 8)" {
		t.Fatalf("kept %d of %d steps: %v, want the replaytest.Click on fire (seq 8)", res.Left, res.Steps, res.Kept)
	}
	min, err := playback.ReadTape(out)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, f := range min.Frames {
		if !f.IsEvent() && f.Dir == frame.Out {
			var m struct {
				Method string
				Params struct{ Text string }
			}
			if json.Unmarshal(f.Raw, &m); m.Method != "" {
				said = append(said, m.Method+" "+m.Params.Text)
			}
		}
	}
	if got := strings.Join(said, ", "); got != "ui/setBadge fire" {
		t.Errorf("the shrunk tape's plugin frames are %q, want the fire badge alone", got)
	}
	if o := playback.Replay(context.Background(), min, &playback.Options{Env: replaytest.Env("badges")}); o.Err != nil || !o.Same() {
		t.Errorf("the shrunk tape without the bug: %v %+v", o.Err, o.Diff.Differences)
	}
	o := playback.Replay(context.Background(), min, &playback.Options{Env: env})
	if o.Err != nil || len(o.Diff.Differences) != 1 || o.Diff.Differences[0].Changes[0].Old != `"fire"` || o.Diff.Differences[0].Changes[0].New != `"boom"` {
		t.Errorf("the shrunk tape with the bug: %v %+v", o.Err, o.Diff.Differences)
	}
}

// TestShrinkNamesAtMostTenKeptSteps: a shrink stopped early keeps many
// steps; its result names the first KeptListed and counts the rest, so
// that shrink prints a line of ten, not one of 250,000.
func TestShrinkNamesAtMostTenKeptSteps(t *testing.T) {
	lines := []replaytest.Line{replaytest.InitIn}
	for i := range 30 {
		lines = append(lines, replaytest.Click(fmt.Sprintf("e%d", i)))
	}
	lines = append(lines, replaytest.Click("fire"), replaytest.Shutdown, "eof", replaytest.InitOut)
	for i := range 30 {
		lines = append(lines, `out {"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"`+fmt.Sprintf("e%d", i)+`"}}`)
	}
	lines = append(lines, `out {"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"fire"}}`)
	rec := replaytest.WriteTape(t, append(lines, "exit")...)
	out := filepath.Join(t.TempDir(), "min.jsonl")
	res, err := Run(context.Background(), rec, &RunOptions{Replay: playback.Options{Env: replaytest.Env("badges", "FIXTURE_BUG=1")}, Jobs: 1, MaxRuns: 2, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Left <= KeptListed || len(res.Kept) != KeptListed || res.KeptMore != res.Left-KeptListed {
		t.Errorf("%d steps left: %d named, %d more counted; want %d named and the rest counted", res.Left, len(res.Kept), res.KeptMore, KeptListed)
	}
}

// TestShrunkIsARegressionTest: a session turns a toggle on, and the
// panel drawn after "go" shows it; the changed plugin says "broken" there
// instead of "done". A candidate without the click that turned the toggle
// on still shows "broken", but also a toggle that is off: the plugin as
// recorded would fail it too. The shrunk tape keeps that click: it
// replays clean against the unchanged plugin and shows only the chased
// difference against the changed one.
func TestShrunkIsARegressionTest(t *testing.T) {
	rec := replaytest.WriteTape(t,
		replaytest.InitIn, replaytest.InitOut,
		replaytest.Click("a"), "out "+replaytest.TogglePanel(false, "a", "working"),
		replaytest.Click("dark"), "out "+replaytest.TogglePanel(true, "dark", "working"),
		replaytest.Click("b"), "out "+replaytest.TogglePanel(true, "b", "working"),
		replaytest.Click("go"), "out "+replaytest.TogglePanel(true, "go", "done"),
		replaytest.Shutdown, "eof", "exit")
	unchanged, changed := replaytest.Env("toggle"), replaytest.Env("toggle", "FIXTURE_BUG=1")
	if o := playback.Replay(context.Background(), rec, &playback.Options{Env: unchanged}); !o.Same() {
		t.Fatalf("the whole tape against the unchanged plugin: %v %+v", o.Err, o.Diff.Differences)
	}
	out := filepath.Join(t.TempDir(), "min.jsonl")
	res, err := Run(context.Background(), rec, &RunOptions{Replay: playback.Options{Env: changed}, Jobs: 2, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Kept, ", "); got != "ui/event (seq 5), ui/event (seq 9)" {
		t.Errorf("kept %s (%d of %d steps), want the clicks on dark and go", got, res.Left, res.Steps)
	}
	min, err := playback.ReadTape(out)
	if err != nil {
		t.Fatal(err)
	}
	if o := playback.Replay(context.Background(), min, &playback.Options{Env: unchanged}); !o.Same() {
		t.Errorf("the shrunk tape against the unchanged plugin: %v %+v", o.Err, o.Diff.Differences)
	}
	o := playback.Replay(context.Background(), min, &playback.Options{Env: changed})
	if o.Err != nil || len(o.Diff.Differences) != 1 {
		t.Fatalf("the shrunk tape against the changed plugin: %v %+v", o.Err, o.Diff.Differences)
	}
	if c := o.Diff.Differences[0].Changes; len(c) != 1 || c[0].Path != "params.title" || c[0].Old != `"done"` || c[0].New != `"broken"` {
		t.Errorf("the shrunk tape fails with %+v, want only params.title done → broken", c)
	}
}

// TestTargetsOfManyChangesReadTheFrameOnce: a difference of n changes (a
// panel of n items, each tone changed) is n targets, each with its values
// as targetOf gives them for that change alone; its frames are decoded
// once for all of them, not once for each (allocations grow with n, not
// n²: 1,000 items took 16 million and 5 s), and a candidate's targets are
// looked up in the whole replay's as a set.
func TestTargetsOfManyChangesReadTheFrameOnce(t *testing.T) {
	const n = 1000 // not parallel: AllocsPerRun counts the process's
	var rec, live []string
	for i := range n {
		rec = append(rec, fmt.Sprintf("f%d=ok", i))
		live = append(live, fmt.Sprintf("f%d=bad", i))
	}
	d := diff.Frames([]frame.Frame{panelOf(1, frame.Out, rec...)}, []frame.Frame{panelOf(1, frame.Out, live...)}, diff.Options{}).Differences
	if len(d) != 1 || len(d[0].Changes) != n {
		t.Fatalf("%d differences, want 1 of %d changes", len(d), n)
	}
	ts := targetsOf(d)
	for _, i := range []int{0, 1, n / 2, n - 1} {
		one := d[0]
		one.Changes = d[0].Changes[i : i+1]
		if want := targetOf(one); ts[i] != want {
			t.Errorf("target %d: %+v, want %+v", i, ts[i], want)
		}
	}
	if ts[1].old != `"ok"` || ts[1].new != `"bad"` {
		t.Errorf("target 1's values: %s → %s", ts[1].old, ts[1].new)
	}
	allocs := testing.AllocsPerRun(3, func() { targetsOf(d) })
	if allocs > 40*n {
		t.Errorf("targetsOf of %d changes: %.0f allocations, more than %d: the frames are decoded for each change", n, allocs, 40*n)
	}
	whole := targetSet(d)
	o := &playback.Outcome{Diff: diff.Result{Differences: d}}
	if !onlyOf(o, whole) {
		t.Error("the whole replay's own differences are not only its own")
	}
	delete(whole, func() target { t := ts[n-1]; t.seq = 0; return t }())
	if onlyOf(o, whole) {
		t.Error("a difference the whole replay did not have passed as one of its own")
	}
}

// TestTargetsAreMatchedByTheirSegments: two changes whose spelled paths
// are alike (diff cuts a long path's middle) but whose segments differ
// are two targets, and a replay shows the one whose segments it has.
func TestTargetsAreMatchedByTheirSegments(t *testing.T) {
	t.Parallel()
	side := func(v string) *diff.Side { return &diff.Side{JSON: []byte(`{"a":{"x":` + v + `,"y":` + v + `}}`)} }
	change := func(seg string) diff.Change {
		return diff.Change{Path: "a.…", Segments: []string{"a", seg}}
	}
	d := func(seg string) diff.Difference {
		return diff.Difference{Kind: diff.Changed, Method: "m", Recorded: side("1"), Live: side("2"), Changes: []diff.Change{change(seg)}}
	}
	x, y := targetOf(d("x")), targetOf(d("y"))
	if x == y {
		t.Fatalf("the changes at a.x and a.y, spelled alike, are one target: %+v", x)
	}
	shown := &playback.Outcome{Diff: diff.Result{Differences: []diff.Difference{d("y")}}}
	if x.in(shown) || !y.in(shown) {
		t.Errorf("a replay that changed a.y: shows a.x's target %v, a.y's %v", x.in(shown), y.in(shown))
	}
}

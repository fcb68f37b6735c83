package noise

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/replaytest"
	"github.com/tapedeck/tapedeck/playback"
)

func TestMain(m *testing.M) { replaytest.Main(m) }

// TestNoiseAtOnceIsNoiseInTurn: Noise with 3 runs at once proposes what
// it proposes one run at a time for a plugin whose note id differs on
// every run: a filter for the id, nothing for the time that stays.
func TestNoiseAtOnceIsNoiseInTurn(t *testing.T) {
	rec := replaytest.PromptTape(t)
	ctx := context.Background()
	opt := &playback.Options{Env: replaytest.Env("randomid")}
	first := playback.Replay(ctx, rec, opt)
	if first.Err != nil || first.Same() {
		t.Fatalf("first replay: err %v, same %v", first.Err, first.Same())
	}
	want := filter.Filter{Regex: `note [0-9a-z]{6}\b`, Replacement: "note [id]", At: "terminal/send:params.text"}
	for _, jobs := range []int{1, 3} {
		nr, err := Find(ctx, first, opt, 7, jobs)
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
	_, opt, first := firstRandomIDReplay(t)
	ctx := context.Background()
	opt.FreshDirs = []string{"PATH"}
	for _, jobs := range []int{1, 3} {
		_, err := Find(ctx, first, opt, 5, jobs)
		if err == nil || !strings.Contains(err.Error(), "(run 2): --fresh-dir") {
			t.Errorf("jobs %d: %v, want run 2's --fresh-dir error", jobs, err)
		}
	}
}

// BenchmarkNoiseHelloGo replays the bundled Go plugin's tape as
// `replay --runs` does, one op a further run, with -j 1 and -j 2: for
// profiles of a run's cost (-cpuprofile, -memprofile).
//
//	go test -run '^$' -bench NoiseHelloGo -benchtime 400x -cpuprofile cpu.out ./internal/noise
func BenchmarkNoiseHelloGo(b *testing.B) {
	plugin := filepath.Join(b.TempDir(), "hello-go")
	if out, err := exec.Command("go", "build", "-o", plugin, "../../testdata/plugins/hello-go").CombinedOutput(); err != nil {
		b.Skipf("build the hello-go fixture: %v\n%s", err, out)
	}
	rec, err := playback.ReadTape("../../testdata/tapes/hello-go.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opt := &playback.Options{Command: []string{plugin}}
	first := playback.Replay(ctx, rec, opt)
	if first.Err != nil || !first.Same() {
		b.Fatalf("first replay: err %v, same %v", first.Err, first.Same())
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprint("j", jobs), func(b *testing.B) {
			nr, err := Find(ctx, first, opt, b.N+1, jobs)
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
	if err := os.WriteFile(filter.ConfigPath(rec.TapePath), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	nr, err := Find(ctx, first, opt, 3, 2)
	if err != nil || nr.Runs != 3 || len(nr.Filters) != 1 {
		t.Fatalf("Noise after the first run: %v, %+v", err, nr)
	}
}

// firstRandomIDReplay is the first replay of replaytest.PromptTape against a plugin
// whose note id is random on every run.
func firstRandomIDReplay(t *testing.T) (*playback.Recording, *playback.Options, *playback.Outcome) {
	t.Helper()
	rec := replaytest.PromptTape(t)
	opt := &playback.Options{Env: replaytest.Env("randomid")}
	first := playback.Replay(context.Background(), rec, opt)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	return rec, opt, first
}

// TestNoiseProposesFiltersInsideAString: a prompt holding a random note
// id and a time that differ on every run gets filters for those two parts
// (not an ignore rule for the whole text); with them in tapedeck.json the
// replay is the same and says which filters applied, and a change of
// "Summarise" to "Summarize" in the same string still fails.
func TestNoiseProposesFiltersInsideAString(t *testing.T) {
	rec := replaytest.PromptTape(t)
	ctx := context.Background()
	opt := &playback.Options{Env: replaytest.Env("prompt", "FIXTURE_COUNTER="+filepath.Join(t.TempDir(), "runs"))}
	first := playback.Replay(ctx, rec, opt)
	if first.Err != nil || first.Same() {
		t.Fatalf("first replay: err %v, same %v", first.Err, first.Same())
	}
	nr, err := Find(ctx, first, opt, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []filter.Filter{
		{Regex: `note [0-9a-z]{6}\b`, Replacement: "note [id]", At: "terminal/send:params.text"},
		{Regex: isoTimeShape, Replacement: "[time]", At: "terminal/send:params.text"},
	}
	if len(nr.Rules) != 0 || len(nr.Filters) != len(want) || nr.Filters[0] != want[0] || nr.Filters[1] != want[1] {
		t.Fatalf("proposed rules %q and filters %+v;\nwant no rule and filters %+v", nr.Rules, nr.Filters, want)
	}
	if err := filter.AddToConfig(first.ConfigPath, nr.Rules, nr.Filters); err != nil {
		t.Fatal(err)
	}

	o := playback.Replay(ctx, rec, opt)
	if o.Err != nil || !o.Same() {
		t.Fatalf("with the proposed filters the replay still differs: %v %+v", o.Err, o.Diff.Differences)
	}
	if note := note.Join(o.Notes, "\n"); !strings.Contains(note, "filters applied: note [id] ×2, [time] ×2") {
		t.Errorf("notes %q do not say which filters applied", o.Notes)
	}
	for _, f := range o.Run.Live {
		if strings.Contains(string(f.Raw), "[time]") || strings.Contains(string(f.Raw), "[id]") {
			t.Errorf("the live run itself was filtered: %s", f.Raw)
		}
	}

	z := *opt
	z.Env = append(opt.Env, "FIXTURE_VERB=Summarize")
	o = playback.Replay(ctx, rec, &z)
	if o.Err != nil || o.Same() {
		t.Fatalf("Summarise → Summarize passed the filters: %v", o.Err)
	}
	d := o.Diff.Differences
	if len(d) != 1 || len(d[0].Changes) != 1 || d[0].Changes[0].Path != "params.text" ||
		d[0].Changes[0].Old != `"Summarise note [id] created [time]"` || d[0].Changes[0].New != `"Summarize note [id] created [time]"` {
		t.Fatalf("differences %+v", d)
	}
}

// TestProposeStringFilters: the shapes recognised in what varied, and the
// whole value varying falling back to an ignore rule (nil).
func TestProposeStringFilters(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   []filter.Filter // nil: an ignore rule
	}{
		{[]string{"req 6f1c2a9e-0b7d-4c3e-9a51-2f8e7d6c5b4a done", "req 0a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d done"},
			[]filter.Filter{{Regex: uuidShape, Replacement: "[uuid]"}}},
		{[]string{"took 41ms", "took 7ms"}, []filter.Filter{{Regex: `took \d+ms\b`, Replacement: "took [number]ms"}}},
		{[]string{"3 of 17 files", "12 of 17 files"}, []filter.Filter{{Regex: `^\d+\b`, Replacement: "[number]"}}},
		{[]string{"build deadbeef01 ok", "build 0123abcdef ok"}, []filter.Filter{{Regex: `build [0-9a-f]{10}\b`, Replacement: "build [hex]"}}},
		{[]string{"token: Ab_9-x!", "token: q-Z_1"}, []filter.Filter{{Regex: `token: [0-9a-zA-Z_\-!]{5,7}$`, Replacement: "token: [varies]"}}},
		{[]string{"on 2026-12-01", "on 2027-01-31"}, []filter.Filter{{Regex: isoDateShape, Replacement: "[date]"}}},
		{[]string{"x8Fa", "k2La"}, nil},
		{[]string{"2026-12-01T10:00:00Z", "2026-12-01T10:00:05Z"}, nil},
		{[]string{"7f-3a", "2b-9c"}, nil},
	} {
		got := proposeStringFilters(c.values)
		if len(got) != len(c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("%q: proposed %+v, want %+v", c.values, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: proposed %+v, want %+v", c.values, got, c.want)
			}
		}
	}
}

// TestProposeRulesJoinsMadeUpNames: paths alike but for member names made
// up at run time (a random id as a key) share one rule with "*" there,
// so that runs converge on it; names that are words stay as they are.
func TestProposeRulesJoinsMadeUpNames(t *testing.T) {
	paths := []pathChange{
		{method: "tools/call", segs: []string{"result", "items", "a1b2c3d4", "at"}},
		{method: "tools/call", segs: []string{"result", "items", "f9e8d7c6", "at"}},
		{method: "tools/call", segs: []string{"result", "items", "k3j4h5g6", "at"}},
		{method: "tools/list", segs: []string{"result", "byId", "id-7f3a21"}},
		{method: "tools/list", segs: []string{"result", "byId", "id-99c0de"}},
		{method: "ui/setPanel", segs: []string{"params", "tree", "label"}},
		{method: "ui/setPanel", segs: []string{"params", "tree", "title"}},
	}
	rules, _ := proposeRules(paths)
	got := strings.Join(rules, " ")
	want := "tools/call:result.items.*.at tools/list:result.byId ui/setPanel:params.tree.label ui/setPanel:params.tree.title"
	if got != want {
		t.Errorf("proposeRules = %s\nwant          %s", got, want)
	}
}

// TestProposeRulesJoinsManyNamesThatComeAndGo: members that came or went
// under one object by manyNames names or more are made up, however short
// ("k1021"), and share the object's rule; fewer keep a rule each, and
// members that changed value but stayed keep theirs whatever their
// number. Before, a plugin naming a member k and a random number got a
// rule for each short name beside the object's: 300 rules, never the same
// twice.
func TestProposeRulesJoinsManyNamesThatComeAndGo(t *testing.T) {
	t.Parallel()
	var paths []pathChange
	for i := range manyNames {
		paths = append(paths, pathChange{method: "ui/setBadge", segs: []string{"params", fmt.Sprintf("k%d", i)}, absent: true})
	}
	for _, name := range []string{"a", "b", "c"} {
		paths = append(paths, pathChange{method: "ui/notify", segs: []string{"params", name}, absent: true})
	}
	for i := range manyNames {
		paths = append(paths, pathChange{method: "ui/setPanel", segs: []string{"params", fmt.Sprintf("v%d", i)}})
	}
	got, _ := proposeRules(paths)
	want := []string{"ui/notify:params.a", "ui/notify:params.b", "ui/notify:params.c", "ui/setBadge:params"}
	for i := range manyNames {
		want = append(want, fmt.Sprintf("ui/setPanel:params.v%d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("proposeRules =\n%q\nwant\n%q", got, want)
	}
}

// TestProposeRulesLeavesOutWhatAnotherCovers: a rule for a member of an
// object whose own rule is proposed is left out (an ignore rule takes the
// whole value), and so is what such a rule covers among the changes every
// run agrees on. Before, the object's rule came with one for each short
// name beside it, and the made-up names absent from every run were listed
// as changes the runs agree on: 9,686 lines.
func TestProposeRulesLeavesOutWhatAnotherCovers(t *testing.T) {
	t.Parallel()
	got, kept := proposeRules([]pathChange{
		{method: "m", segs: []string{"params", "a1b2c3d4"}, absent: true},
		{method: "m", segs: []string{"params", "f9e8d7c6"}, absent: true},
		{method: "m", segs: []string{"params", "k12"}, absent: true},
		{method: "m", segs: []string{"params", "text"}},
		{method: "n", segs: []string{"params", "text"}},
	})
	if want := []string{"m:params", "n:params.text"}; !slices.Equal(got, want) {
		t.Errorf("proposeRules = %q, want %q", got, want)
	}
	var rules []jsonpath.Rule
	for _, s := range got {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	for _, c := range []struct {
		method string
		segs   []string
		want   bool
	}{
		{"m", []string{"params", "f00dfeed99"}, true},
		{"m", []string{"params"}, true},
		{"m", []string{"result"}, false},
		{"n", []string{"params", "text", "x"}, true},
		{"n", []string{"params", "other"}, false},
	} {
		if got := coveredBy(rules, c.method, c.segs); got != c.want {
			t.Errorf("coveredBy(%s %q) = %v, want %v", c.method, c.segs, got, c.want)
		}
		if got := kept.covers(c.method, c.segs); got != c.want {
			t.Errorf("the rules kept cover %s %q: %v, want %v", c.method, c.segs, got, c.want)
		}
	}
}

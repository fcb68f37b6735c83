package host

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
)

func tl(lines ...string) []frame.Frame {
	var fs []frame.Frame
	for i, l := range lines {
		f := frame.Frame{Seq: uint64(i + 1)}
		switch {
		case l == "eof":
			f.Event, f.Dir = frame.EventEOF, frame.In
		case strings.HasPrefix(l, "signal "):
			f.Event = frame.EventSignal
			f.SetEnd(l[7:], nil)
		case strings.HasPrefix(l, "> "):
			f.Dir, f.Raw = frame.In, []byte(l[2:])
		case strings.HasPrefix(l, "< "):
			f.Dir, f.Raw = frame.Out, []byte(l[2:])
		}
		fs = append(fs, f)
	}
	return fs
}

func TestPlanStepsAndAnswers(t *testing.T) {
	t.Parallel()
	rec := tl(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`> {"jsonrpc":"2.0","method":"panel/open"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`< {"jsonrpc":"2.0","id":"a","method":"prompt/inject","params":{"text":"x"}}`,
		`< {"jsonrpc":"2.0","id":"b","method":"terminal/send","params":{"text":"y"}}`,
		`> {"jsonrpc":"2.0","id":"b","result":{"paneId":"p"}}`,
		`> {"jsonrpc":"2.0","id":"a","error":{"code":-32001,"message":"no"}}`,
		`signal SIGTERM`,
		"eof",
	)
	p := makePlan(rec, Reading{})
	var got []string
	for _, s := range p.steps {
		d := map[stepKind]string{sendFrame: "send", sendAnswer: "answer", closeStdin: "close", sendSignal: "signal"}[s.kind]
		if s.call != nil {
			d += " " + s.call.method
		}
		got = append(got, d+" after ["+strings.Join(s.causes, ", ")+"]")
	}
	want := "send after [], send after [], " +
		"answer terminal/send after [reply 1, call prompt/inject, call terminal/send], " +
		"answer prompt/inject after [], signal after [], close after []"
	if strings.Join(got, ", ") != want {
		t.Errorf("steps:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	if len(p.tail) != 0 {
		t.Errorf("tail %v", p.tail)
	}
	// A live request with other params still takes the recorded call, and
	// says so; a method never recorded gets nothing.
	c, differs := p.match(nil, "prompt/inject", []byte(`{"text":"changed"}`), nil)
	if c == nil || !differs {
		t.Fatalf("match with other params: %v %v", c, differs)
	}
	if c, _ := p.match(nil, "prompt/inject", []byte(`{"text":"x"}`), nil); c != nil {
		t.Error("a recorded call was used twice")
	}
	if c, _ := p.match(nil, "storage/get", nil, nil); c != nil {
		t.Error("matched a method the recording never saw")
	}
	if got := string(answerFor(c2(p, "terminal/send").answer, []byte(`17`))); got != `{"jsonrpc":"2.0","id":17,"result":{"paneId":"p"}}` {
		t.Errorf("answer %s", got)
	}
	if got := string(answerFor(c2(p, "prompt/inject").answer, []byte(`"live"`))); got != `{"jsonrpc":"2.0","id":"live","error":{"code":-32001,"message":"no"}}` {
		t.Errorf("error answer %s", got)
	}
	if got := string(unmatchedAnswer("x/y", []byte("3"))); !strings.Contains(got, `"id":3`) || !strings.Contains(got, "-32601") || !strings.Contains(got, "x/y") {
		t.Errorf("unmatched answer %s", got)
	}
}

func c2(p *plan, method string) *call { return p.calls[method][0] }

// TestRunAgainstCat replays a small echo recording against cat, in
// process, so the race detector sees the replay's goroutines.
func TestRunAgainstCat(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat on PATH")
	}
	rec := echoRecording(50)
	res, err := Run(context.Background(), rec, Options{Command: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	var in, out int
	var exit *frame.Frame
	for i := range res.Live {
		f := &res.Live[i]
		switch {
		case f.Event == frame.EventExit:
			exit = f
		case f.IsEvent():
		case f.Dir == frame.In:
			in++
		case f.Dir == frame.Out:
			out++
		}
	}
	if in != 50 || out != 50 || exit == nil || exit.Code() == nil || *exit.Code() != 0 {
		t.Errorf("in %d, out %d, exit %+v; notes %v", in, out, exit, res.Notes)
	}
}

// TestUnmatchedRequestGetsAnError: a live request the recording never saw
// is answered with a JSON-RPC error naming the method, and reported.
func TestUnmatchedRequestGetsAnError(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// In the recording the plugin said "done" before the host closed.
	rec := tl(`> {"jsonrpc":"2.0","method":"panel/open"}`, `< {"jsonrpc":"2.0","method":"done"}`, "eof")
	plugin := `read l; echo '{"jsonrpc":"2.0","id":1,"method":"nope/x","params":{}}'; read answer; echo "$answer"; echo '{"jsonrpc":"2.0","method":"done"}'`
	res, err := Run(context.Background(), rec, Options{Command: []string{"sh", "-c", plugin}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unmatched) != 1 || !strings.HasPrefix(res.Unmatched[0], "nope/x") {
		t.Fatalf("unmatched %v", res.Unmatched)
	}
	var echoed string
	for _, f := range res.Live {
		if f.Dir == frame.Out && strings.Contains(string(f.Raw), "error") {
			echoed = string(f.Raw)
		}
	}
	if !strings.Contains(echoed, `"id":1`) || !strings.Contains(echoed, "-32601") || !strings.Contains(echoed, "nope/x") {
		t.Errorf("the plugin got %q", echoed)
	}
}

// TestPaceKeepsRecordedGapsClamped: --pace realtime waits out the recorded
// gap between host frames (a lower bound, so not timing-dependent), and
// --max-gap clamps a long one.
func TestPaceKeepsRecordedGapsClamped(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat on PATH")
	}
	rec := tl(`> {"jsonrpc":"2.0","method":"a"}`, `> {"jsonrpc":"2.0","method":"b"}`, `> {"jsonrpc":"2.0","method":"c"}`)
	rec[1].At = int64(300 * time.Millisecond)
	rec[2].At = rec[1].At + int64(time.Hour)
	res, err := Run(context.Background(), rec, Options{Command: []string{"cat"}, Pace: 1, MaxGap: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var sent []time.Duration
	for _, f := range res.Live {
		if f.Dir == frame.In && !f.IsEvent() {
			sent = append(sent, time.Duration(f.At))
		}
	}
	if len(sent) != 3 {
		t.Fatalf("sent %d frames", len(sent))
	}
	if gap := sent[1] - sent[0]; gap < 50*time.Millisecond {
		t.Errorf("frame b followed a after %v: the recorded 300 ms gap (clamped to 50 ms) was not kept", gap)
	}
	if gap := sent[2] - sent[1]; gap >= time.Hour {
		t.Errorf("the hour-long gap was not clamped: %v", gap)
	}
	asap, err := Run(context.Background(), rec, Options{Command: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if asap.Elapsed >= time.Hour {
		t.Errorf("asap took %v", asap.Elapsed)
	}
}

// TestWaitsForCausesNotSilence: a plugin that is silent for longer than
// any quiet period a replay could guess (it waits on a timer) still gets
// the next host frame only after it said what it said before that frame in
// the recording, and an extra frame of another method delays nothing.
func TestWaitsForCausesNotSilence(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	rec := tl(
		`> {"jsonrpc":"2.0","method":"a"}`,
		`< {"jsonrpc":"2.0","method":"slow"}`,
		`> {"jsonrpc":"2.0","method":"b"}`,
		`< {"jsonrpc":"2.0","method":"got b"}`,
		"eof",
	)
	// The plugin says "slow" 400 ms after a (a timer), then an extra line,
	// and reports b only if b came after "slow" was said.
	plugin := `read a; sleep 0.4; echo '{"jsonrpc":"2.0","method":"slow"}'; echo '{"jsonrpc":"2.0","method":"extra"}'; ` +
		`read b; echo '{"jsonrpc":"2.0","method":"got b"}'; read rest`
	res, err := Run(context.Background(), rec, Options{Command: []string{"sh", "-c", plugin}, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, f := range res.Live {
		if !f.IsEvent() {
			order = append(order, f.Dir.String()+" "+string(f.Raw))
		}
	}
	got := strings.Join(order, "\n")
	slow := strings.Index(got, `out {"jsonrpc":"2.0","method":"slow"}`)
	b := strings.Index(got, `in {"jsonrpc":"2.0","method":"b"}`)
	if slow < 0 || b < slow || !strings.Contains(got, "got b") {
		t.Errorf("host frame b went before the plugin said slow:\n%s", got)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestAnAnswerGivenUpOnStillGoesOut: a plugin that now makes its requests
// one at a time (the second only once the first is answered) gets both
// answers; the one it made late is answered then, and the notes say so.
func TestAnAnswerGivenUpOnStillGoesOut(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	rec := tl(
		`> {"jsonrpc":"2.0","method":"go"}`,
		`< {"jsonrpc":"2.0","id":1,"method":"p","params":{}}`,
		`< {"jsonrpc":"2.0","id":2,"method":"q","params":{}}`,
		`> {"jsonrpc":"2.0","id":1,"result":"P"}`,
		`> {"jsonrpc":"2.0","id":2,"result":"Q"}`,
		"eof",
	)
	plugin := `read go; echo '{"jsonrpc":"2.0","id":7,"method":"q","params":{}}'; read q; echo "$q"; ` +
		`echo '{"jsonrpc":"2.0","id":8,"method":"p","params":{}}'; read p; echo "$p"; read rest`
	res, err := Run(context.Background(), rec, Options{Command: []string{"sh", "-c", plugin}, StepTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var echoed []string
	for _, f := range res.Live {
		if f.Dir == frame.Out && strings.Contains(string(f.Raw), "result") {
			echoed = append(echoed, string(f.Raw))
		}
	}
	want := []string{`{"jsonrpc":"2.0","id":7,"result":"Q"}`, `{"jsonrpc":"2.0","id":8,"result":"P"}`}
	if strings.Join(echoed, " ") != strings.Join(want, " ") {
		t.Errorf("the plugin got %q, want %q", echoed, want)
	}
	notes := note.Join(res.Notes, "\n")
	if !strings.Contains(notes, "made its p request (recorded seq 2) later than recorded") || strings.Contains(notes, "never") {
		t.Errorf("notes:\n%s", notes)
	}
	if len(res.Pairs) != 2 {
		t.Errorf("pairs %v", res.Pairs)
	}
}

func TestReadScriptErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ script, want string }{
		{"// a comment\n\n[1,2]\n", "line 3: want a JSON object"},
		{`{"jsonrpc":"2.0","id":1}` + "\n" + `{"x":1}`, "line 2: not a host frame"},
		{`{"send":{"jsonrpc":"2.0","method":"a"},"after":5}`, `line 1: "after": 5 is neither a method nor {"reply": ID}`},
		{`{"send":{"jsonrpc":"2.0","method":"a"},"pause":"soon"}`, `line 1: "pause": "soon" is not a duration`},
		{`{"send":{"jsonrpc":"2.0","method":"a"},"wait":"1s"}`, `line 1: json: unknown field "wait"`},
		{`{"signal":"SIGNOPE"}`, `line 1: unknown signal "SIGNOPE"`},
		{`{"answer":""}`, `line 1: "answer" must name the method`},
		{`{"send":{"jsonrpc":"2.0","method":"a"},"pause":"100000h"}`, `line 1: "pause": "100000h" is longer than the 10m0s a line may wait`},
		{`{"close":true,"quiet":"11m"}`, `line 1: "quiet": "11m" is longer than the 10m0s a line may wait`},
	} {
		_, err := ReadScript(strings.NewReader(c.script))
		if err == nil || !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadScript(%q) = %v, want %q", c.script, err, c.want)
		}
	}
}

// TestPlayAScript: a script line waits for what its "after" names, answer
// lines and the "answers" defaults answer the plugin's requests with its
// own ids, and anything else gets null.
func TestPlayAScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
// "go" may only come once the plugin has answered initialize.
{"send":{"jsonrpc":"2.0","method":"go"},"after":{"reply":1}}
{"answer":"ask","result":{"ok":true}}
{"answers":{"other":{"n":1}}}
{"close":true,"after":"third"}
`
	s, err := ReadScript(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	plugin := `read init; sleep 0.3; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read go; echo "$go" >&2; ` +
		`echo '{"jsonrpc":"2.0","id":5,"method":"ask","params":{}}'; read a; echo "$a"; ` +
		`echo '{"jsonrpc":"2.0","id":6,"method":"other","params":{}}'; read b; echo "$b"; ` +
		`echo '{"jsonrpc":"2.0","id":7,"method":"third","params":{}}'; read c; echo "$c"; read rest`
	p, err := start(Options{Command: []string{"sh", "-c", plugin}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Play(context.Background(), s, p, Options{StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// (stdout and stderr are two pipes: only each one's own order is fixed.)
	var out, errs []string
	for _, f := range res.Live {
		switch {
		case f.IsEvent():
		case f.Dir == frame.Out:
			out = append(out, f.Dir.String()+" "+string(f.Raw))
		case f.Dir == frame.Err:
			errs = append(errs, string(f.Raw))
		}
	}
	if strings.Join(errs, "\n") != `{"jsonrpc":"2.0","method":"go"}` {
		t.Errorf("the plugin got %q, want go", errs)
	}
	reply, sent := -1, -1
	for i, f := range res.Live {
		switch {
		case f.Dir == frame.Out && string(f.Raw) == `{"jsonrpc":"2.0","id":1,"result":{}}`:
			reply = i
		case f.Dir == frame.In && string(f.Raw) == `{"jsonrpc":"2.0","method":"go"}`:
			sent = i
		}
	}
	if reply < 0 || sent < reply {
		t.Errorf("go was sent (#%d) before the plugin answered initialize (#%d)", sent, reply)
	}
	want := []string{
		`out {"jsonrpc":"2.0","id":1,"result":{}}`,
		`out {"jsonrpc":"2.0","id":5,"method":"ask","params":{}}`,
		`out {"jsonrpc":"2.0","id":5,"result":{"ok":true}}`,
		`out {"jsonrpc":"2.0","id":6,"method":"other","params":{}}`,
		`out {"jsonrpc":"2.0","id":6,"result":{"n":1}}`,
		`out {"jsonrpc":"2.0","id":7,"method":"third","params":{}}`,
		`out {"jsonrpc":"2.0","id":7,"result":null}`,
	}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("the plugin said:\n%s\nwant:\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Notes) != 0 || len(res.Unmatched) != 0 {
		t.Errorf("notes %q, unmatched %q", res.Notes, res.Unmatched)
	}
}

// TestStepIs64Bytes: a plan holds a step a host frame; it took 88 bytes.
func TestStepIs64Bytes(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(step{}); n != 64 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Fatalf("a plan step takes %d bytes, want 64", n)
	}
}

// answerFor is the answer made from recorded, with liveID.
func answerFor(recorded *frame.Frame, liveID json.RawMessage) []byte {
	return answerWith(answerTail(recorded), liveID)
}

// TestAPlanServesRunsOneAfterAnotherAndAtOnce: one Plan replays its
// recording again and again, three runs at once too, and each run answers
// the plugin's request from the recording: what one run marks on the
// plan's calls (matched, sent) does not carry into the next.
func TestAPlanServesRunsOneAfterAnotherAndAtOnce(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	rec := tl(
		`> {"jsonrpc":"2.0","method":"panel/open"}`,
		`< {"jsonrpc":"2.0","id":1,"method":"storage/get","params":{"key":"n"}}`,
		`> {"jsonrpc":"2.0","id":1,"result":{"value":41}}`,
		`< {"jsonrpc":"2.0","method":"done","params":{"value":41}}`,
		"eof")
	// The plugin asks, and says what the answer held.
	plugin := `read l; echo '{"jsonrpc":"2.0","id":"live-7","method":"storage/get","params":{"key":"n"}}'; read a; case "$a" in *'"id":"live-7"'*'"value":41'*) echo '{"jsonrpc":"2.0","method":"done","params":{"value":41}}';; *) echo "{\"got\":$a}";; esac; read l`
	pl := NewPlan(rec, Reading{})
	check := func(res *Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var said []string
		for _, f := range res.Live {
			if f.Dir == frame.Out && !f.IsEvent() {
				said = append(said, string(f.Raw))
			}
		}
		if len(said) != 2 || said[1] != `{"jsonrpc":"2.0","method":"done","params":{"value":41}}` || len(res.Unmatched) > 0 {
			t.Errorf("the plugin said %q; unmatched %v; notes %v", said, res.Unmatched, res.Notes)
		}
	}
	opts := Options{Command: []string{"sh", "-c", plugin}}
	for range 2 {
		check(pl.Run(context.Background(), opts))
	}
	type run struct {
		res *Result
		err error
	}
	runs := make(chan run, 3)
	for range 3 {
		go func() {
			res, err := pl.Run(context.Background(), opts)
			runs <- run{res, err}
		}()
	}
	for range 3 {
		r := <-runs
		check(r.res, r.err)
	}
	for _, c := range pl.p.all {
		if c.used || c.sent || c.liveID != nil {
			t.Errorf("the plan's own call was marked by a run: %+v", c)
		}
	}
}

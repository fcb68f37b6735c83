package replay

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

func tl(lines ...string) []frame.Frame {
	var fs []frame.Frame
	for i, l := range lines {
		f := frame.Frame{Seq: uint64(i + 1)}
		switch {
		case l == "eof":
			f.Event, f.Dir = frame.EventEOF, frame.In
		case strings.HasPrefix(l, "signal "):
			f.Event, f.Signal = frame.EventSignal, l[7:]
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
	p := makePlan(rec)
	var got []string
	for _, s := range p.steps {
		d := map[stepKind]string{sendFrame: "send", sendAnswer: "answer", closeStdin: "close", sendSignal: "signal"}[s.kind]
		if s.call != nil {
			d += " " + s.call.method
		}
		got = append(got, d+" after "+string(rune('0'+s.expectOut)))
	}
	want := "send after 0, send after 0, answer terminal/send after 3, answer prompt/inject after 3, signal after 3, close after 3"
	if strings.Join(got, ", ") != want {
		t.Errorf("steps:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	if p.totalOut != 3 {
		t.Errorf("totalOut %d", p.totalOut)
	}
	// A live request with other params still takes the recorded call, and
	// says so; a method never recorded gets nothing.
	c, differs := p.match("prompt/inject", []byte(`{"text":"changed"}`))
	if c == nil || !differs {
		t.Fatalf("match with other params: %v %v", c, differs)
	}
	if c, _ := p.match("prompt/inject", []byte(`{"text":"x"}`)); c != nil {
		t.Error("a recorded call was used twice")
	}
	if c, _ := p.match("storage/get", nil); c != nil {
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
	if in != 50 || out != 50 || exit == nil || exit.Code == nil || *exit.Code != 0 {
		t.Errorf("in %d, out %d, exit %+v; notes %v", in, out, exit, res.Notes)
	}
}

// TestUnmatchedRequestGetsAnError: a live request the recording never saw
// is answered with a JSON-RPC error naming the method, and reported.
func TestUnmatchedRequestGetsAnError(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// In the recording the plugin said two lines before the host closed.
	rec := tl(`> {"jsonrpc":"2.0","method":"panel/open"}`, `< {"a":1}`, `< {"b":2}`, "eof")
	plugin := `read l; echo '{"jsonrpc":"2.0","id":1,"method":"nope/x","params":{}}'; read answer; echo "$answer"`
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

package shrink

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

func line(seq uint64, dir frame.Dir, raw string) frame.Frame {
	return frame.Frame{Seq: seq, Dir: dir, Raw: []byte(raw)}
}

// TestSplitKeepsTheTapeValid: initialize and the ending stay; a reply goes
// with the host request it answers, a host answer with the plugin request,
// what the plugin said with the step it followed.
func TestSplitKeepsTheTapeValid(t *testing.T) {
	code := 0
	rec := []frame.Frame{
		line(1, frame.Err, "booting"),
		line(2, frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		line(3, frame.In, `{"jsonrpc":"2.0","method":"panel/open","params":{}}`),
		line(4, frame.Out, `{"jsonrpc":"2.0","id":1,"result":{}}`), // answers initialize
		line(5, frame.Out, `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{}}`),
		line(6, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"a"}}`),
		line(7, frame.In, `{"jsonrpc":"2.0","id":1,"result":null}`), // answers ui/setPanel, late
		line(8, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{}}`),
		line(9, frame.In, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`),
		{Seq: 10, Event: frame.EventEOF, Dir: frame.In},
		frame.Frame{Seq: 11, Event: frame.EventExit}.WithEnd("", &code),
	}
	tp := Split(rec, agenttyLifecycle)
	var units []string
	for _, u := range tp.Units() {
		s := u.What
		if u.Fixed {
			s += "!"
		}
		units = append(units, s)
	}
	if got, want := strings.Join(units, " "), "initialize! panel/open ui/event shutdown! eof!"; got != want {
		t.Fatalf("units %q, want %q", got, want)
	}
	seqs := func(fs []frame.Frame) string {
		var s []string
		for _, f := range fs {
			s = append(s, strconv.FormatUint(f.Seq, 10))
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		keep []int
		want string
	}{
		{nil, "1,2,4,9,10,11"},            // the boot line, initialize and its answer, the ending
		{[]int{0}, "1,2,3,4,5,7,9,10,11"}, // panel/open, its setPanel and the host's late answer
		{[]int{1}, "1,2,4,6,8,9,10,11"},   // ui/event and its notification
		{[]int{0, 1}, "1,2,3,4,5,6,7,8,9,10,11"},
	}
	for _, c := range cases {
		if got := seqs(tp.Keep(c.keep)); got != c.want {
			t.Errorf("Keep(%v) = seqs %s, want %s", c.keep, got, c.want)
		}
	}
	// panel/open was written before initialize was answered, but one step
	// that may go is no run: its setPanel is its own.
	if tp.Pooled(5) {
		t.Error("the setPanel after one step written ahead is pooled")
	}
}

// TestSplitPoolsWhatFollowsStepsWrittenAhead: when the host wrote several
// steps before the plugin said anything (all lines piped at once), what
// the plugin then said may be any of theirs: it is pooled over them and
// stays while any of them does; a reply still goes with its request, and
// a host answer with the plugin request it answers.
func TestSplitPoolsWhatFollowsStepsWrittenAhead(t *testing.T) {
	rec := []frame.Frame{
		line(1, frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		line(2, frame.Out, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		line(3, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"a"}}`),
		line(4, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"a"}}`),
		// b, c and d written at once; then what they made the plugin say.
		line(5, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"b"}}`),
		line(6, frame.In, `{"jsonrpc":"2.0","id":2,"method":"session/get","params":{}}`),
		line(7, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"d"}}`),
		line(8, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"b"}}`),
		line(9, frame.Out, `{"jsonrpc":"2.0","id":2,"result":{}}`), // answers session/get
		line(10, frame.Out, `{"jsonrpc":"2.0","id":5,"method":"storage/get","params":{}}`),
		line(11, frame.In, `{"jsonrpc":"2.0","id":5,"result":null}`),
		line(12, frame.Err, "d done"),
		line(13, frame.In, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":"e"}}`),
		line(14, frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"e"}}`),
		line(15, frame.In, `{"jsonrpc":"2.0","method":"shutdown","params":{}}`),
		{Seq: 16, Event: frame.EventEOF, Dir: frame.In},
	}
	tp := Split(rec, agenttyLifecycle)
	var pooled []string
	for _, f := range rec {
		if tp.Pooled(f.Seq) {
			pooled = append(pooled, strconv.FormatUint(f.Seq, 10))
		}
	}
	if got, want := strings.Join(pooled, ","), "8,10,11,12"; got != want {
		t.Fatalf("pooled seqs %s, want %s", got, want)
	}
	seqs := func(fs []frame.Frame) string {
		var s []string
		for _, f := range fs {
			s = append(s, strconv.FormatUint(f.Seq, 10))
		}
		return strings.Join(s, ",")
	}
	// Steps: 0 a, 1 b, 2 session/get, 3 d, 4 e.
	cases := []struct {
		keep []int
		want string
	}{
		{nil, "1,2,15,16"},
		{[]int{1}, "1,2,5,8,10,11,12,15,16"},   // b alone keeps the pool
		{[]int{2}, "1,2,6,8,9,10,11,12,15,16"}, // and the reply to session/get
		{[]int{0, 4}, "1,2,3,4,13,14,15,16"},   // none of the run: no pool
		{[]int{3}, "1,2,7,8,10,11,12,15,16"},   // the last of the run
	}
	for _, c := range cases {
		if got := seqs(tp.Keep(c.keep)); got != c.want {
			t.Errorf("Keep(%v) = seqs %s, want %s", c.keep, got, c.want)
		}
	}
}

// agenttyLifecycle is an Agentty host's, as package profile says it.
var agenttyLifecycle = Lifecycle{
	Opening: func(m string) bool { return m == "initialize" },
	Closing: func(m string) bool { return m == "shutdown" },
}

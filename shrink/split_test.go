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
		{Seq: 11, Event: frame.EventExit, Code: &code},
	}
	tp := Split(rec)
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
}

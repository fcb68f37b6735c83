package golden

import (
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/tape"
)

func TestWithID(t *testing.T) {
	for _, c := range []struct{ raw, id, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"x"}`, `2`, `{"jsonrpc":"2.0","id":2,"method":"x"}`},
		{`{"method":"x", "id" : "a\"b" ,"params":{"id":1}}`, `"n"`, `{"method":"x", "id" : "n" ,"params":{"id":1}}`},
		{`{"params":{"id":1},"id":[1,2]}`, `3`, `{"params":{"id":1},"id":3}`},
		{`{"method":"x"}`, `3`, `{"method":"x"}`},
		{`not json`, `3`, `not json`},
	} {
		if got := string(withID([]byte(c.raw), []byte(c.id))); got != c.want {
			t.Errorf("withID(%s, %s) = %s, want %s", c.raw, c.id, got, c.want)
		}
	}
}

// TestUpdate drives Update with a comparison made by package diff: a
// changed frame is rewritten in place, an extra one inserted with the seq
// before it, and every other line kept as written.
func TestUpdate(t *testing.T) {
	data := `{"tapedeck":1,"session":{"id":"x","command":["p"],"cwd":"","plugin":{"id":"","name":"","version":""},"started":"0001-01-01T00:00:00Z","ended":null,"status":"","exit":{"code":0},"frames":{"in":1,"out":2,"err":0},"bytes":{"in":2,"out":2,"err":0},"tapedeck":""}}` + "\n" +
		`{"seq":1,"at":0,"dir":"in","text":"go"}` + "\n" +
		`{"seq":2,"at":10,  "dir":"out","text":"a"}` + "\n" +
		`{"seq":3,"at":20,"dir":"out","text":"b"}` + "\n" +
		`{"seq":4,"at":30,"event":"exit","code":0}` + "\n"
	tf, err := tape.ReadFile([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	live := []frame.Frame{
		{Seq: 1, Dir: frame.In, Raw: []byte("go")},
		{Seq: 2, At: 5, Dir: frame.Out, Raw: []byte("a")},
		{Seq: 3, At: 6, Dir: frame.Out, Raw: []byte("new")},
		{Seq: 4, At: 7, Dir: frame.Out, Raw: []byte("B")},
		frame.Frame{Seq: 5, At: 8, Event: frame.EventExit}.WithEnd("", &code),
	}
	res := diff.Frames(tf.Frames, live, diff.Options{})
	out, err := Update(tf, Replay{Live: live, Sent: map[uint64]uint64{1: 1}}, res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if len(got) != 6 || got[1] != want[1] || got[2] != want[2] || got[5] != want[4] {
		t.Fatalf("kept lines changed:\n%s", out)
	}
	if !strings.Contains(got[0], `"frames":{"in":1,"out":3,"err":0}`) {
		t.Errorf("header counts: %s", got[0])
	}
	// Which of "new" and "B" is the change and which the insertion is the
	// alignment's to say; each goes in after "a", with a seq that keeps
	// the later lines as they were.
	if !strings.HasPrefix(got[3], `{"seq":2,"at":10,"dir":"out"`) && !strings.HasPrefix(got[3], `{"seq":3,"at":20,"dir":"out"`) {
		t.Errorf("line 4: %s", got[3])
	}
	if _, err := tape.ReadFile(out); err != nil {
		t.Errorf("the update does not read back: %v", err)
	}
	if out, err := Update(tf, Replay{Live: live}, diff.Result{}, Options{}); out != nil || err != nil {
		t.Errorf("no difference: %q %v", out, err)
	}
}

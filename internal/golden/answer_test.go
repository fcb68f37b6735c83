package golden

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/message"
	"github.com/tapedeck/tapedeck/tape"
)

const header = `{"tapedeck":1,"session":{"id":"01m8b1gtape00000000000000000","name":"t","command":["true"],"cwd":".","status":"complete","exit":{"code":0}}}`

// TestDropAnswerMatchesReference: dropAnswer, which pairs requests and
// answers once, drops the same lines as the scan of the whole tape per
// missing request it replaced (referenceDropAnswer), on random tapes with
// ids that repeat, answers missing, late or extra, requests both ways,
// stderr and lines that are not JSON, for random sets of missing frames.
func TestDropAnswerMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dropped := 0
	for n := range 500 {
		tf := randomTape(t, rng, 1+rng.IntN(30))
		got, want := newUpdate(tf, Replay{}), newUpdate(tf, Replay{})
		var missing []int
		for i := range tf.Frames {
			if rng.IntN(3) == 0 {
				missing = append(missing, i)
				got.dropAnswer(i)
				referenceDropAnswer(want, i)
			}
		}
		if !reflect.DeepEqual(got.drop, want.drop) {
			t.Fatalf("tape %d, missing %v: dropped %v, want %v\n%s", n, missing, got.drop, want.drop, tf.Lines)
		}
		dropped += len(want.drop)
	}
	if dropped == 0 {
		t.Error("no answer dropped: the tapes do not test dropAnswer")
	}
}

// TestUpdateManyMissingAllocs: a golden of n plugin requests the host
// answered, replayed against a plugin that makes none of them. Update
// drops each request and its answer with allocations in proportion to
// the tape, not to the tape once per missing request (the scan it
// replaced parsed every line for each: over 4n² allocations here).
func TestUpdateManyMissingAllocs(t *testing.T) {
	const n = 300
	var b bytes.Buffer
	fmt.Fprintln(&b, header)
	for i := range n {
		fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"out","json":{"jsonrpc":"2.0","id":%d,"method":"storage/get","params":{"key":"k"}}}`+"\n", 2*i+1, 2*i+1, i+1)
		fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"in","json":{"jsonrpc":"2.0","id":%d,"result":null}}`+"\n", 2*i+2, 2*i+2, i+1)
	}
	tf, err := tape.ReadFile(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	res := diff.Frames(tf.Frames, nil, diff.Options{})
	if len(res.Differences) != n || res.More != 0 {
		t.Fatalf("%d differences (%d more), want %d", len(res.Differences), res.More, n)
	}
	out, err := Update(tf, Replay{}, res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tape.ReadFile(out); err != nil || len(got.Frames) != 0 {
		t.Fatalf("the update keeps %d frames (%v), want none:\n%s", len(got.Frames), err, out)
	}
	const perFrame = 100
	allocs := testing.AllocsPerRun(3, func() { _, _ = Update(tf, Replay{}, res, Options{}) })
	t.Logf("%d frames: %.0f allocations", 2*n, allocs)
	if allocs > perFrame*2*n {
		t.Errorf("Update of %d frames, all missing: %.0f allocations, want at most %d a frame", 2*n, allocs, perFrame)
	}
}

// randomTape makes a tape of n lines from a small vocabulary, so that ids
// repeat and answers come late, early, twice or never.
func randomTape(t *testing.T, rng *rand.Rand, n int) *tape.File {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintln(&b, header)
	for i := range n {
		seq := i + 1
		id := rng.IntN(3)
		switch rng.IntN(9) {
		case 0, 1:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"out","json":{"jsonrpc":"2.0","id":%d,"method":"storage/get","params":{}}}`+"\n", seq, seq, id)
		case 2, 3:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"in","json":{"jsonrpc":"2.0","id":%d,"result":null}}`+"\n", seq, seq, id)
		case 4:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"in","json":{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":"no"}}}`+"\n", seq, seq, id)
		case 5:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"in","json":{"jsonrpc":"2.0","id":%d,"method":"session/get","params":{}}}`+"\n", seq, seq, id)
		case 6:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"out","json":{"jsonrpc":"2.0","id":%d,"result":{}}}`+"\n", seq, seq, id)
		case 7:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"err","text":"id %d"}`+"\n", seq, seq, id)
		case 8:
			fmt.Fprintf(&b, `{"seq":%d,"at":%d,"dir":"out","text":"not json %d"}`+"\n", seq, seq, id)
		}
	}
	tf, err := tape.ReadFile(b.Bytes())
	if err != nil {
		t.Fatalf("random tape: %v\n%s", err, b.Bytes())
	}
	return tf
}

// referenceDropAnswer is dropAnswer as it was: for each missing request,
// a scan of the whole tape for the requests and answers with its id.
func referenceDropAnswer(u *update, ri int) {
	m := message.Parse(u.t.Frames[ri].Raw)
	if m.Kind != message.Request {
		return
	}
	id := m.IDKey()
	var reqs, replies []int
	for i := range u.t.Frames {
		f := &u.t.Frames[i]
		if f.IsEvent() || f.Dir == frame.Err {
			continue
		}
		m := message.Parse(f.Raw)
		switch {
		case f.Dir == frame.Out && m.Kind == message.Request && m.IDKey() == id:
			reqs = append(reqs, i)
		case f.Dir == frame.In && m.IsReply() && m.IDKey() == id:
			replies = append(replies, i)
		}
	}
	for k, i := range reqs {
		if i == ri && k < len(replies) {
			u.drop[replies[k]] = true
		}
	}
}

package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/recent"
)

// timeline is what the page shows of each frame of frames, whole (the
// streamed pages write the same entries one at a time).
func timeline(frames []frame.Frame) []frameData {
	tl := newTimeline()
	out := make([]frameData, len(frames))
	for i := range frames {
		out[i] = tl.entry(&frames[i])
	}
	return out
}

// writePage renders the page with p encoded whole, as the reports were
// before they streamed.
func writePage(w io.Writer, p *pageData) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	return renderPage(w, p.Title, p.Kind, string(bytes.TrimSuffix(data.Bytes(), []byte("\n"))))
}

// wholeReplay is the replay report as it was written before it streamed:
// both timelines and every difference built, then the page encoded whole.
// The streamed page must be byte for byte the same.
func wholeReplay(r ReplayInput, rec, live []frame.Frame) ([]byte, error) {
	name := r.Name
	if name == "" {
		name = sessionName(r.Meta)
	}
	rd := &replayData{
		Name: name, Same: r.Err == "" && r.Diff.Same(), Compared: r.Diff.Compared,
		ElapsedMS: r.Elapsed.Milliseconds(), Notes: r.Notes, Unmatched: r.Unmatched, Error: r.Err,
		Ran: r.Live != nil || r.Err == "", Live: timeline(live), Diffs: []diffData{},
	}
	if s := r.Diff.NotKept(); s != "" {
		rd.Notes = append(rd.Notes[:len(rd.Notes):len(rd.Notes)], s)
	}
	indexBySeq := func(frames []frame.Frame) map[uint64]int {
		m := map[uint64]int{}
		for i := range frames {
			m[frames[i].Seq] = i
		}
		return m
	}
	recIndex, liveIndex := indexBySeq(rec), indexBySeq(live)
	for _, d := range r.Diff.Differences {
		rd.Diffs = append(rd.Diffs, differenceData(d, recIndex, liveIndex))
	}
	p := &pageData{Kind: "replay", Meta: r.Meta, Frames: timeline(rec), Replay: rd, Title: "tapedeck · replay of " + name}
	var b bytes.Buffer
	err := writePage(&b, p)
	return b.Bytes(), err
}

// TestReplayStreamsTheWholePage: the streamed replay report is the page
// the whole one was, byte for byte: with differences of every kind
// (their sides' indexes found as the frames go by, a side of a seq its
// timeline lacks at -1), pairs of requests and answers, notes and the
// differences not kept, a replay that did not run, and lines that are
// not UTF-8 or would end the script element.
func TestReplayStreamsTheWholePage(t *testing.T) {
	t.Parallel()
	rec, live := labelReplay("Hello", "Howdy")
	extra := &builder{}
	extra.line(frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"</script><b>\xff"}}`)
	live = append(live, extra.frames...)
	live[len(live)-1].Seq = 99
	res := diff.Frames(rec, live, diff.Options{})
	if len(res.Differences) < 2 {
		t.Fatalf("%d differences: the test shows too little", len(res.Differences))
	}
	ghost := diff.Difference{Kind: diff.Missing, What: "notification x", Recorded: &diff.Side{Seq: 12345, Raw: "{}"}}
	cases := []struct {
		name      string
		in        ReplayInput
		rec, live []frame.Frame
	}{
		{"differences", ReplayInput{Name: "t.jsonl", Meta: &frame.Session{ID: "x"}, Diff: res, Notes: []string{"a note"}, Unmatched: []string{"host/x"}}, rec, live},
		{"a side no frame has", ReplayInput{Meta: &frame.Session{ID: "x", Name: "n"}, Diff: diff.Result{Differences: append(res.Differences, ghost), More: 3}}, rec, live},
		{"same", ReplayInput{Name: "t.jsonl", Diff: diff.Frames(rec, rec, diff.Options{})}, rec, rec},
		{"did not run", ReplayInput{Name: "t.jsonl", Err: "plugin did not start"}, rec, nil},
	}
	for _, c := range cases {
		in := c.in
		in.Recorded = Slice(c.rec)
		if c.live != nil {
			in.Live = Slice(c.live)
		}
		want, err := wholeReplay(in, c.rec, c.live)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Replay(&got, in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			i := 0
			for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
				i++
			}
			t.Errorf("%s: the streamed page differs from the whole one at byte %d:\nstreamed %.200q\nwhole    %.200q", c.name, i, got.Bytes()[i:], want[i:])
		}
	}
}

// TestReplayReportHoldsAFrameAtATime: the report of a replay of 100,000
// frames a side reads them as they are written and holds four bytes a
// frame: its heap grows by far less than the frames' entries (about
// 200 bytes each) would take, let alone the frames.
func TestReplayReportHoldsAFrameAtATime(t *testing.T) {
	const n = 100_000
	frames := func(text string) Frames {
		return func(fn func(*frame.Frame) error) error {
			var raw []byte
			for i := range n {
				raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"%s %d %s"}}`, text, i, strings.Repeat("x", 100))
				if err := fn(&frame.Frame{Seq: uint64(i + 1), At: int64(i), Dir: frame.Out, Raw: raw}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var peak uint64
	w := &heapWatcher{peak: &peak}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Replay(w, ReplayInput{Name: "big", Recorded: frames("rec"), Live: frames("live")}); err != nil {
		t.Fatal(err)
	}
	if w.n < 2*n*100 {
		t.Fatalf("the page has %d bytes: the frames were not written", w.n)
	}
	grown := int64(peak) - int64(before.HeapAlloc)
	t.Logf("heap grew by %.1f MiB at most while writing a %.1f MiB page", float64(grown)/(1<<20), float64(w.n)/(1<<20))
	if grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB while writing the report: it holds the timelines", grown>>20)
	}
}

// heapWatcher discards what is written, noting the live heap after a
// collection every 8 MiB.
type heapWatcher struct {
	n, next int
	peak    *uint64
}

func (h *heapWatcher) Write(p []byte) (int, error) {
	h.n += len(p)
	if h.n >= h.next {
		h.next = h.n + 8<<20
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		*h.peak = max(*h.peak, m.HeapAlloc)
	}
	return len(p), nil
}

// TestReportPendingStaysBounded: a session of requests never answered,
// each with a long id and a new long method, costs a report a bounded
// table of the requests it waits for, in number and in bytes, ids hashed
// and methods cut (a crafted tape of 400,000 such requests held 422 MB
// in show --html; here 49 MiB with the bounds lifted, 22 with them), and a recent
// request is still paired with its answer.
func TestReportPendingStaysBounded(t *testing.T) {
	const n = 200_000
	long := strings.Repeat("m", 100)
	frames := func(fn func(*frame.Frame) error) error {
		var raw []byte
		for i := range n {
			raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":"%s-%d","method":"%s/%d","params":{}}`, long, i, long, i)
			if err := fn(&frame.Frame{Seq: uint64(i + 1), Dir: frame.Out, Raw: raw}); err != nil {
				return err
			}
		}
		raw = fmt.Appendf(raw[:0], `{"jsonrpc":"2.0","id":"%s-%d","result":{}}`, long, n-1)
		return fn(&frame.Frame{Seq: n + 1, Dir: frame.In, Raw: raw})
	}
	var peak uint64
	w := &heapWatcher{peak: &peak}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var page bytes.Buffer
	tee := io.MultiWriter(w, &tailBuffer{b: &page, keep: 1 << 20})
	if err := Session(tee, &frame.Session{ID: "x"}, frames, nil); err != nil {
		t.Fatal(err)
	}
	grown := int64(peak) - int64(before.HeapAlloc)
	t.Logf("heap grew by %.1f MiB at most while writing a %.1f MiB page", float64(grown)/(1<<20), float64(w.n)/(1<<20))
	if grown > 32<<20 {
		t.Errorf("the heap grew by %d MiB: the report holds every request it waits for", grown>>20)
	}
	if !strings.Contains(page.String(), fmt.Sprintf(`"p":%d`, n)) {
		t.Errorf("the last answer is not paired with its request (want \"p\":%d at the page's end):\n%.300s", n, page.String())
	}
}

// tailBuffer keeps the last keep bytes written to it, at most twice that.
type tailBuffer struct {
	b    *bytes.Buffer
	keep int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if t.b.Len() > 2*t.keep {
		last := bytes.Clone(t.b.Bytes()[t.b.Len()-t.keep:])
		t.b.Reset()
		t.b.Write(last)
	}
	return len(p), nil
}

// TestReportPairsAReusedIdWithItsAnswer: a request that reuses the id of
// one still waiting is the one its answer pairs with, even with as many
// others waiting as the table holds between the two (it kept the first
// one's place and was forgotten with it: neither was paired).
func TestReportPairsAReusedIdWithItsAnswer(t *testing.T) {
	t.Parallel()
	b := &builder{}
	b.line(frame.In, `{"jsonrpc":"2.0","id":"keep","method":"first","params":{}}`)
	for i := range recent.MaxCalls - 1 {
		b.line(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"other","params":{}}`, i))
	}
	b.line(frame.In, `{"jsonrpc":"2.0","id":"keep","method":"second","params":{}}`)
	b.line(frame.In, `{"jsonrpc":"2.0","id":"one more","method":"other","params":{}}`)
	b.line(frame.Out, `{"jsonrpc":"2.0","id":"keep","result":{}}`)
	got := timeline(b.frames)
	answer := got[len(got)-1]
	if want := len(got) - 2; answer.P != want || answer.M != "second" {
		t.Errorf("the answer pairs with frame index %d (%s), want %d (second)", answer.P-1, answer.M, want-1)
	}
}

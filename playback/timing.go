package playback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/jsonpath"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
)

// timing is what of the plugin's traffic its host profile leaves to timing
// (profile.Timing), ready to apply to a comparison: an answer's place among
// other frames, the order of independent streams, how many reports on its
// own work a plugin sends. What it explains is a note, not a difference.
type timing struct {
	profile string
	answers bool
	streams []jsonpath.Rule
	chatter map[string]bool
	// closing is the profile's Closing: a message cut short by the
	// plugin's exit after the host asked it to go is not held against it.
	closing func(method string) bool
}

// timingOf reads a profile's timing.
func timingOf(p profile.Profile) (timing, error) {
	pt := p.Timing()
	t := timing{profile: p.Name(), answers: pt.Answers, closing: p.Closing}
	for _, s := range pt.Streams {
		r, err := jsonpath.ParseRule(s)
		if err != nil {
			return t, fmt.Errorf("the %s profile's stream %q: %v", p.Name(), s, err)
		}
		t.streams = append(t.streams, r)
	}
	if len(pt.Chatter) > 0 {
		t.chatter = map[string]bool{}
		for _, m := range pt.Chatter {
			t.chatter[m] = true
		}
	}
	return t, nil
}

// chatterFunc is the engine's Reading.Chatter; nil for none.
func (t timing) chatterFunc() func(string) bool {
	if len(t.chatter) == 0 {
		return nil
	}
	return func(method string) bool { return t.chatter[method] }
}

// relax takes out of res the differences that the timing explains, and
// says them in notes instead (appended to notes): a moved answer (compared
// by the request it answers wherever it comes), a moved notification of a
// stream that kept its place within its stream, a moved, missing or extra
// report of chatter. recorded and live are the frames res compared (by
// seq). A reorder within a stream, and everything else, stays a
// difference.
func (t timing) relax(res diff.Result, recorded, live []frame.Frame, notes []note.Note) (diff.Result, []note.Note) {
	if res.Same() || !t.answers && len(t.streams) == 0 && len(t.chatter) == 0 && t.closing == nil {
		return res, notes
	}
	rec, liv := streamIndex{frames: recorded}, streamIndex{frames: live}
	var keep []diff.Difference
	var order, counts []string
	nOrder := map[string]int{}
	nCount := map[string][2]int{} // method → fewer, more
	// The recording's message cut by the plugin's exit (there is at most
	// one: its stdout's last), and the replay's extra frame that finished
	// it after the host's closing message, if any.
	var recCut, finished *frame.Frame
	var recClosing string
	for _, d := range res.Differences {
		if d.Kind == diff.Missing && recCut == nil {
			recCut, recClosing = t.cutAtExit(d.Recorded, &rec)
		}
	}
	for i := 0; recCut != nil && finished == nil && i < len(res.Differences); i++ {
		if d := res.Differences[i]; d.Kind == diff.Extra && d.Live != nil {
			if f := liv.frame(d.Live.Seq); finishes(f, recCut) && t.closedBefore(&liv, f.Seq) != "" {
				finished = f
			}
		}
	}
	for _, d := range res.Differences {
		switch d.Kind {
		case diff.Moved:
			if why := t.freeMove(d, &rec, &liv); why != "" {
				if nOrder[why] == 0 {
					order = append(order, why)
				}
				nOrder[why]++
				continue
			}
		case diff.Extra:
			if f, closing := t.cutAtExit(d.Live, &liv); f != nil {
				notes = append(notes, note.Text(cutNote(f, "replay", closing)))
				continue
			}
			if finished != nil && d.Live.Seq == finished.Seq {
				notes = append(notes, note.Textf("the plugin's stdout ended in the middle of a message (recorded seq %d) after the host's %s, and the replay finished it (replay seq %d): not compared", recCut.Seq, recClosing, finished.Seq))
				continue
			}
		case diff.Missing:
			if recCut != nil && d.Recorded != nil && d.Recorded.Seq == recCut.Seq {
				if finished == nil {
					notes = append(notes, note.Text(cutNote(recCut, "recorded", recClosing)))
				}
				continue
			}
		}
		switch d.Kind {
		case diff.Missing, diff.Extra:
			side, idx := d.Recorded, &rec
			if d.Kind == diff.Extra {
				side, idx = d.Live, &liv
			}
			if e, ok := idx.envelope(side); ok && e.Kind != message.Response && e.Kind != message.ErrorReply && t.chatter[string(e.Method)] {
				m := string(e.Method)
				c, seen := nCount[m]
				if !seen {
					counts = append(counts, m)
				}
				if d.Kind == diff.Missing {
					c[0]++
				} else {
					c[1]++
				}
				nCount[m] = c
				continue
			}
		}
		keep = append(keep, d)
	}
	if len(keep) == len(res.Differences) {
		return res, notes
	}
	res.Differences = keep
	if len(order) > 0 {
		parts := make([]string, len(order))
		total := 0
		for i, w := range order {
			parts[i] = fmt.Sprintf("%s ×%d", w, nOrder[w])
			total += nOrder[w]
		}
		notes = append(notes, note.Textf("%d frames came in another place than recorded, which the %s profile leaves to timing: %s", total, t.profile, strings.Join(parts, ", ")))
	}
	if len(counts) > 0 {
		parts := make([]string, len(counts))
		for i, m := range counts {
			c := nCount[m]
			var p []string
			if c[0] > 0 {
				p = append(p, fmt.Sprintf("%d recorded not said", c[0]))
			}
			if c[1] > 0 {
				p = append(p, fmt.Sprintf("%d said not recorded", c[1]))
			}
			parts[i] = m + " " + strings.Join(p, " and ")
		}
		notes = append(notes, note.Textf("reports on the plugin's own work came as often as its timing made them (the %s profile does not count them): %s", t.profile, strings.Join(parts, "; ")))
	}
	return res, notes
}

// cutAtExit returns, of a frame of the plugin's that only one side holds
// (an extra one of the replay's, a missing one of the recording's), the
// frame when it is a header-framed message its stdout ended in the middle
// of (it can only be the last) after the host sent its closing message,
// and that message's method: a server that exits while another of its
// threads writes (gopls: 1 replay in 40 under load, and 1 recording in 4
// to 12 in CI's soak), to a host that has stopped reading. nil otherwise.
func (t timing) cutAtExit(side *diff.Side, idx *streamIndex) (*frame.Frame, string) {
	if side == nil || t.closing == nil {
		return nil, ""
	}
	f := idx.frame(side.Seq)
	if f == nil || f.IsEvent() || f.Dir != frame.Out || f.Head() == nil {
		return nil, ""
	}
	n, ok := wire.ContentLength(f.Head())
	if !ok || n <= int64(len(f.Raw)) {
		return nil, ""
	}
	if closing := t.closedBefore(idx, f.Seq); closing != "" {
		return f, closing
	}
	return nil, ""
}

// closedBefore is the method of the first closing message the host sent
// before seq in idx's timeline (the profile's Closing); "" for none. The
// first is found once for the timeline (closing): each of a crafted tape's
// messages cut short asked for it, and each read the whole timeline
// (10,000 such messages: 54 s).
func (t timing) closedBefore(idx *streamIndex, seq uint64) string {
	if !idx.closingRead {
		idx.closingRead = true
		for i := range idx.frames {
			h := &idx.frames[i]
			if h.IsEvent() || h.Dir != frame.In {
				continue
			}
			if e := message.ReadEnvelope(h.Raw); (e.Kind == message.Notification || e.Kind == message.Request) && t.closing(string(e.Method)) {
				idx.closing = h
				break
			}
		}
	}
	if idx.closing == nil || idx.closing.Seq > seq {
		return ""
	}
	return string(message.ReadEnvelope(idx.closing.Raw).Method)
}

// cutNote says that f, a message cut by the plugin's exit after the
// host's closing message, was not compared; which names its side.
func cutNote(f *frame.Frame, which, closing string) string {
	n, _ := wire.ContentLength(f.Head())
	return fmt.Sprintf("the plugin's stdout ended in the middle of a message (%d of %d bytes, %s seq %d) after the host's %s: not compared", len(f.Raw), n, which, f.Seq, closing)
}

// finishes reports whether f, a frame of the replay's, is the whole of
// the message cut, of the recording's, is the start of: the same header
// block, and a body of the length it gives that begins with cut's bytes.
// (Where it came is the caller's to check.)
func finishes(f, cut *frame.Frame) bool {
	if f == nil || f.IsEvent() || f.Dir != frame.Out || !bytes.Equal(f.Head(), cut.Head()) {
		return false
	}
	n, ok := wire.ContentLength(f.Head())
	return ok && n == int64(len(f.Raw)) && bytes.HasPrefix(f.Raw, cut.Raw)
}

// freeMove says why a moved frame's place does not count ("" when it
// does): an answer, chatter, or a notification that kept its place in its
// stream.
func (t timing) freeMove(d diff.Difference, rec, liv *streamIndex) string {
	e, ok := rec.envelope(d.Recorded)
	if !ok {
		return ""
	}
	method := string(e.Method)
	switch {
	case e.Kind == message.Response || e.Kind == message.ErrorReply:
		if t.answers {
			return "answers"
		}
		return ""
	case e.Kind == message.Notification && t.chatter[method]:
		return method
	case e.Kind != message.Notification:
		return ""
	}
	for _, r := range t.streams {
		if !r.MatchMethod(method) {
			continue
		}
		key, ok := rec.streamKey(d.Recorded.Seq, r)
		if !ok {
			continue
		}
		i, ok1 := rec.place(d.Recorded.Seq, method, r)
		j, ok2 := liv.place(d.Live.Seq, method, r)
		if lkey, ok3 := liv.streamKey(d.Live.Seq, r); ok1 && ok2 && ok3 && lkey == key && i == j {
			return fmt.Sprintf("%s in order by %s", method, r.Path)
		}
		return ""
	}
	return ""
}

// streamIndex finds frames of one side by seq, and their places in their
// streams.
type streamIndex struct {
	frames []frame.Frame
	bySeq  map[uint64]*frame.Frame
	// places are the places of the plugin's notifications in their
	// streams, by seq, for each method and rule asked of (see place).
	places map[string]map[uint64]int
	// keysRead counts the frames whose stream key place read.
	keysRead int
	// closing is the host's first closing message (see closedBefore),
	// once closingRead; the host's frames are in the order of their seqs
	// (arrange moves only the plugin's).
	closing     *frame.Frame
	closingRead bool
}

func (x *streamIndex) frame(seq uint64) *frame.Frame {
	if x.bySeq == nil {
		x.bySeq = make(map[uint64]*frame.Frame, len(x.frames))
		for i := range x.frames {
			x.bySeq[x.frames[i].Seq] = &x.frames[i]
		}
	}
	return x.bySeq[seq]
}

// envelope is the envelope of side's frame; false when there is none.
func (x *streamIndex) envelope(side *diff.Side) (message.Envelope, bool) {
	if side == nil {
		return message.Envelope{}, false
	}
	f := x.frame(side.Seq)
	if f == nil || f.IsEvent() || f.Dir != frame.Out {
		return message.Envelope{}, false
	}
	e := message.ReadEnvelope(f.Raw)
	return e, e.Kind != 0
}

// streamKey is the stream of frame seq under rule r: the JSON text of its
// first value at r's path.
func (x *streamIndex) streamKey(seq uint64, r jsonpath.Rule) (string, bool) {
	f := x.frame(seq)
	if f == nil {
		return "", false
	}
	return keyAt(f.Raw, r.Path)
}

// place is the position of frame seq among the plugin's notifications of
// method in its stream under rule r, counted from 0; false when it is no
// such notification. The places of every notification of method under r
// are counted in one reading of the timeline, the first time they are
// asked for: a replay whose plugin reordered a stream has a moved
// difference for each frame out of place, and counting anew for each read
// the whole timeline each time (4,000 progress notifications of one token
// with each pair swapped: 6.3 s, growing with the square of them).
func (x *streamIndex) place(seq uint64, method string, r jsonpath.Rule) (int, bool) {
	k := method + "\x00" + r.String()
	at, ok := x.places[k]
	if !ok {
		at = map[uint64]int{}
		n := map[string]int{} // notifications so far, by stream
		for i := range x.frames {
			f := &x.frames[i]
			if f.IsEvent() || f.Dir != frame.Out {
				continue
			}
			if e := message.ReadEnvelope(f.Raw); e.Kind != message.Notification || string(e.Method) != method {
				continue
			}
			x.keysRead++
			if key, ok := keyAt(f.Raw, r.Path); ok {
				at[f.Seq] = n[key]
				n[key]++
			}
		}
		if x.places == nil {
			x.places = map[string]map[uint64]int{}
		}
		x.places[k] = at
	}
	i, ok := at[seq]
	return i, ok
}

// keyAt is the JSON text of the first value of message raw at a concrete
// path p matches.
func keyAt(raw []byte, p jsonpath.Path) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	var found string
	ok := false
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if ok || len(path) > diff.MaxDepth {
			return
		}
		if len(path) > 0 && p.Match(path) {
			b, _ := json.Marshal(v)
			found, ok = string(b), true
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(c, append(path, k))
			}
		case []any:
			for i, c := range t {
				walk(c, append(path, "["+strconv.Itoa(i)+"]"))
			}
		}
	}
	walk(v, nil)
	return found, ok
}

// arrange returns live with the plugin's frames of independent streams
// (answers, by the request they answer; notifications of a stream, by
// its key) put where their counterparts are in recorded, each stream's
// frames in the order live has them, every other frame of the plugin in
// its live order between them: a reorder across streams is not a
// difference, a reorder within one still is. The plugin's frames move
// among the places they had; the host's frames go first, in their order,
// so that an answer moved before its request still has it (the comparison
// names an answer by the host request before it); stderr and events stay.
// moved counts the plugin's frames that changed place; live itself is
// returned when none did, and is never changed.
func (t timing) arrange(recorded, live []frame.Frame) (out []frame.Frame, moved int) {
	if !t.answers && len(t.streams) == 0 {
		return live, 0
	}
	var slots []int // the places of the plugin's frames in live
	queues := map[string][]int{}
	var fixed []int
	for i := range live {
		f := &live[i]
		if f.IsEvent() || f.Dir != frame.Out {
			continue
		}
		slots = append(slots, i)
		if s, ok := t.streamOf(f); ok {
			queues[s] = append(queues[s], i)
		} else {
			fixed = append(fixed, i)
		}
	}
	if len(queues) == 0 {
		return live, 0
	}
	order := make([]int, 0, len(slots))
	taken := make(map[int]bool, len(slots))
	take := func(i int) { order = append(order, i); taken[i] = true }
	for i := range recorded {
		f := &recorded[i]
		if f.IsEvent() || f.Dir != frame.Out {
			continue
		}
		if s, ok := t.streamOf(f); ok {
			if q := queues[s]; len(q) > 0 {
				take(q[0])
				queues[s] = q[1:]
			}
		} else if len(fixed) > 0 {
			take(fixed[0])
			fixed = fixed[1:]
		}
	}
	for _, i := range slots {
		if !taken[i] {
			order = append(order, i)
		}
	}
	for k, i := range order {
		if i != slots[k] {
			moved++
		}
	}
	if moved == 0 {
		return live, 0
	}
	placed := make([]frame.Frame, len(live))
	copy(placed, live)
	for k, i := range order {
		placed[slots[k]] = live[i]
	}
	out = make([]frame.Frame, 0, len(live))
	for i := range placed {
		if f := &placed[i]; !f.IsEvent() && f.Dir == frame.In {
			out = append(out, *f)
		}
	}
	for i := range placed {
		if f := &placed[i]; f.IsEvent() || f.Dir != frame.In {
			out = append(out, *f)
		}
	}
	return out, moved
}

// streamOf is the independent stream a plugin frame belongs to; false
// for a frame whose place among the others counts.
func (t timing) streamOf(f *frame.Frame) (string, bool) {
	e := message.ReadEnvelope(f.Raw)
	switch {
	case (e.Kind == message.Response || e.Kind == message.ErrorReply) && t.answers:
		return "reply " + message.IDKey(e.ID), true
	case e.Kind != message.Notification || t.chatter[string(e.Method)]:
		return "", false
	}
	for _, r := range t.streams {
		if r.MatchMethod(string(e.Method)) {
			if key, ok := keyAt(f.Raw, r.Path); ok {
				return string(e.Method) + "\x00" + key, true
			}
		}
	}
	return "", false
}

// arrangedNote says how many frames arrange moved; "" for none.
func (t timing) arrangedNote(moved int) string {
	if moved == 0 {
		return ""
	}
	var within []string
	if t.answers {
		within = append(within, "answers by the request they answer")
	}
	for _, r := range t.streams {
		within = append(within, r.Method+" by "+r.Path.String())
	}
	return fmt.Sprintf("%d of the plugin's frames came in another order across independent streams than recorded; the %s profile compares them within their streams (%s)", moved, t.profile, strings.Join(within, ", "))
}

// timing is the timing o's replay was compared under (none for a
// comparison of two recordings).
func (o *Outcome) timing() timing {
	if o.prepared == nil {
		return timing{}
	}
	return o.prepared.timing
}

// diff compares recorded with live under opts: the plugin's chatter of
// each method apart from the rest and from the other methods', each in
// its own order, so that one report more or fewer than recorded shifts
// nothing else (and is a note, see relax); a changed report is still a
// difference.
func (t timing) diff(recorded, live []frame.Frame, opts diff.Options) diff.Result {
	if len(t.chatter) == 0 {
		return diff.Frames(recorded, live, opts)
	}
	recMain, recChat := t.split(recorded)
	liveMain, liveChat := t.split(live)
	res := diff.Frames(recMain, liveMain, opts)
	if len(recChat)+len(liveChat) == 0 {
		return res
	}
	var methods []string
	for _, m := range [2]map[string][]frame.Frame{recChat, liveChat} {
		for method := range m {
			if !slices.Contains(methods, method) {
				methods = append(methods, method)
			}
		}
	}
	sort.Strings(methods)
	for _, m := range methods {
		chat := diff.Frames(recChat[m], liveChat[m], opts)
		res.Differences = append(res.Differences, chat.Differences...)
		res.Compared[0] += chat.Compared[0]
		res.Compared[1] += chat.Compared[1]
	}
	// In the order of the timeline: by the recorded frame, else the live.
	at := func(d diff.Difference) uint64 {
		if d.Recorded != nil {
			return d.Recorded.Seq
		}
		return d.Live.Seq
	}
	sort.SliceStable(res.Differences, func(i, j int) bool { return at(res.Differences[i]) < at(res.Differences[j]) })
	return res
}

// split parts frames into the plugin's chatter, by method, and the rest;
// frames itself when it holds no chatter.
func (t timing) split(frames []frame.Frame) (rest []frame.Frame, chatter map[string][]frame.Frame) {
	for i := range frames {
		f := &frames[i]
		m, ok := t.chatterOf(f)
		if !ok {
			if chatter != nil {
				rest = append(rest, *f)
			}
			continue
		}
		if chatter == nil {
			chatter = map[string][]frame.Frame{}
			rest = append(make([]frame.Frame, 0, len(frames)), frames[:i]...)
		}
		chatter[m] = append(chatter[m], *f)
	}
	if chatter == nil {
		return frames, nil
	}
	return rest, chatter
}

// chatterOf is the method of f when it is a request or notification of
// the plugin's of a chatter method.
func (t timing) chatterOf(f *frame.Frame) (string, bool) {
	if f.IsEvent() || f.Dir != frame.Out || len(t.chatter) == 0 {
		return "", false
	}
	e := message.ReadEnvelope(f.Raw)
	m := string(e.Method)
	return m, (e.Kind == message.Request || e.Kind == message.Notification) && t.chatter[m]
}

// Package golden owns updating a golden tape from a replay so that the
// update reviews as the change it is: every line of a frame that did not
// change stays byte for byte (its seq and its at included), a changed frame
// is rewritten in its line's place, a missing frame's line goes (with the
// host's answer to it, for a request), and an extra frame is inserted after
// the frame it followed in the replay, repeating that line's seq so that no
// later line changes (tape.Reader reads such a seq as the next free one).
// An update with no difference changes nothing. It works on frames and tape
// lines, never on a database or a process.
package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/wire"
	"github.com/tapedeck/tapedeck/message"
	"github.com/tapedeck/tapedeck/tape"
)

// Replay is what a replay produced, as an update needs it.
type Replay struct {
	Live []frame.Frame
	// Pairs maps a live plugin request's seq to the seq of the recorded
	// request it was answered as.
	Pairs map[uint64]uint64
	// Sent maps the seq of each host frame the replay sent from the
	// recording to that recorded frame's seq.
	Sent map[uint64]uint64
	// Fingerprint is the replay's own environment fingerprint; when set
	// and not the tape's, the updated header takes it, so that accepting
	// the update makes later drift be told against the replay's
	// surroundings.
	Fingerprint *frame.Fingerprint
}

// Options says how the replay was compared.
type Options struct {
	// Stderr: stderr lines were compared, so they are updated too. When
	// they were not, the tape keeps its recorded stderr lines.
	Stderr bool
}

// ErrAlignment reports a comparison that does not fit the tape it is said
// to be of: a bug, never the user's doing.
var ErrAlignment = errors.New("the comparison does not fit the tape")

// Update returns the bytes of the tape t updated with the replay rp, whose
// comparison with t is res; nil when res has no difference.
func Update(t *tape.File, rp Replay, res diff.Result, opts Options) ([]byte, error) {
	if res.Same() {
		return nil, nil
	}
	u := newUpdate(t, rp)
	if err := u.classify(res, opts); err != nil {
		return nil, err
	}
	u.placeInserts(opts)
	out, err := u.write()
	if err != nil {
		return nil, err
	}
	if _, err := tape.ReadFile(out); err != nil {
		return nil, fmt.Errorf("updated tape does not read back: %w", err)
	}
	return out, nil
}

type update struct {
	t       *tape.File
	rp      Replay
	recIdx  map[uint64]int // recorded seq → index in t.Frames
	liveIdx map[uint64]int // live seq → index in rp.Live

	replace map[int]int  // recorded index → live index of its changed frame
	drop    map[int]bool // recorded indexes whose lines go
	insert  map[int]bool // live indexes to insert
	anchor  map[int]int  // live index → the recorded index it stands for
	exit    bool         // the exit differs
	after   map[int][]int
	// ids are the request ids (canonical) the tape's requests use, to
	// keep an inserted request from taking one of them.
	ids map[string]bool
	// answers maps the recorded index of each plugin request the host
	// answered to that of its answer; nil until dropAnswer first needs it.
	answers map[int]int
}

func newUpdate(t *tape.File, rp Replay) *update {
	u := &update{
		t: t, rp: rp,
		recIdx:  make(map[uint64]int, len(t.Frames)),
		liveIdx: make(map[uint64]int, len(rp.Live)),
		replace: map[int]int{}, drop: map[int]bool{}, insert: map[int]bool{},
		anchor: map[int]int{}, after: map[int][]int{}, ids: map[string]bool{},
	}
	for i := range t.Frames {
		u.recIdx[t.Frames[i].Seq] = i
		if f := &t.Frames[i]; f.Dir == frame.Out && !f.IsEvent() {
			if m := message.Parse(f.Raw); m.Kind == message.Request {
				u.ids[m.IDKey()] = true
			}
		}
	}
	for i := range rp.Live {
		u.liveIdx[rp.Live[i].Seq] = i
	}
	return u
}

// classify reads the differences, and pairs the frames they leave out.
func (u *update) classify(res diff.Result, opts Options) error {
	liveChanged := map[int]bool{} // live indexes of changed frames
	for _, d := range res.Differences {
		if err := u.take(d, liveChanged); err != nil {
			return err
		}
	}
	// What no difference names is equal: pair it in order, stream by
	// stream, as the comparison aligned it.
	streams := []frame.Dir{frame.Out}
	if opts.Stderr {
		streams = append(streams, frame.Err)
	}
	for _, dir := range streams {
		if err := u.pairEqual(dir, liveChanged); err != nil {
			return err
		}
	}
	for ls, rs := range u.rp.Sent {
		li, lok := u.liveIdx[ls]
		ri, rok := u.recIdx[rs]
		if lok && rok {
			u.anchor[li] = ri
		}
	}
	return nil
}

// take reads one difference: a changed frame is replaced, a missing one
// dropped (with the host's answer to it), an extra one inserted, a moved
// one both; liveChanged gets the live index of a changed frame. A
// difference that names frames neither side has is ErrAlignment.
func (u *update) take(d diff.Difference, liveChanged map[int]bool) error {
	var ri, li int
	var rok, lok bool
	if d.Recorded != nil {
		ri, rok = u.recIdx[d.Recorded.Seq]
	}
	if d.Live != nil {
		li, lok = u.liveIdx[d.Live.Seq]
	}
	switch {
	case d.Kind == diff.Exit:
		u.exit = true
	case d.Kind == diff.Changed && rok && lok:
		u.replace[ri], u.anchor[li], liveChanged[li] = li, ri, true
	case d.Kind == diff.Missing && rok:
		u.drop[ri] = true
		u.dropAnswer(ri)
	case d.Kind == diff.Extra && lok:
		u.insert[li] = true
	case d.Kind == diff.Moved && rok && lok:
		u.drop[ri], u.insert[li] = true, true
	default:
		return fmt.Errorf("%w: %s %s", ErrAlignment, d.Kind, d.What)
	}
	return nil
}

// pairEqual anchors, in order, the live frames of stream dir that no
// difference names to the recorded ones no difference names;
// ErrAlignment when their numbers differ.
func (u *update) pairEqual(dir frame.Dir, liveChanged map[int]bool) error {
	var rec, live []int
	for i := range u.t.Frames {
		if f := &u.t.Frames[i]; f.Dir == dir && !f.IsEvent() && !u.drop[i] {
			if _, ok := u.replace[i]; !ok {
				rec = append(rec, i)
			}
		}
	}
	for j := range u.rp.Live {
		if f := &u.rp.Live[j]; f.Dir == dir && !f.IsEvent() && !u.insert[j] && !liveChanged[j] {
			live = append(live, j)
		}
	}
	if len(rec) != len(live) {
		return fmt.Errorf("%w: %d equal %s frames recorded, %d replayed", ErrAlignment, len(rec), dir, len(live))
	}
	for k, j := range live {
		u.anchor[j] = rec[k]
	}
	return nil
}

// dropAnswer drops the host's recorded answer to the request at recorded
// index ri (paired by id in order, as replay pairs them). The pairs are
// made once, on the first call, so that each missing request costs a
// lookup rather than a read of the whole tape.
func (u *update) dropAnswer(ri int) {
	if u.answers == nil {
		u.answers = pairAnswers(u.t.Frames)
	}
	if a, ok := u.answers[ri]; ok {
		u.drop[a] = true
	}
}

// pairAnswers maps the index in frames of each plugin request the host
// answered to the index of the host's answer: the k-th request with an id
// goes with the k-th answer with that id, as replay pairs them.
func pairAnswers(frames []frame.Frame) map[int]int {
	type byID struct{ reqs, replies []int }
	ids := map[string]*byID{}
	of := func(id string) *byID {
		b := ids[id]
		if b == nil {
			b = &byID{}
			ids[id] = b
		}
		return b
	}
	for i := range frames {
		f := &frames[i]
		if f.IsEvent() || f.Dir == frame.Err {
			continue
		}
		m := message.Parse(f.Raw)
		switch {
		case f.Dir == frame.Out && m.Kind == message.Request:
			b := of(m.IDKey())
			b.reqs = append(b.reqs, i)
		case f.Dir == frame.In && m.IsReply():
			b := of(m.IDKey())
			b.replies = append(b.replies, i)
		}
	}
	pairs := map[int]int{}
	for _, b := range ids {
		for k, i := range b.reqs {
			if k < len(b.replies) {
				pairs[i] = b.replies[k]
			}
		}
	}
	return pairs
}

// placeInserts puts each inserted live frame after the recorded frame that
// the live frame before it stands for; a host answer the replay made up for
// an inserted request goes with it.
func (u *update) placeInserts(opts Options) {
	at := -1                      // the recorded index the live frames so far reach
	inserted := map[string]bool{} // live ids of inserted requests
	for j := range u.rp.Live {
		f := &u.rp.Live[j]
		if ri, ok := u.anchor[j]; ok {
			at = ri
			continue
		}
		if f.IsEvent() || f.Dir == frame.Err && !opts.Stderr {
			continue
		}
		m := message.Parse(f.Raw)
		switch {
		case u.insert[j]:
			if m.Kind == message.Request {
				if _, paired := u.rp.Pairs[f.Seq]; !paired {
					inserted[m.IDKey()] = true
				}
			}
		case f.Dir == frame.In && m.IsReply() && inserted[m.IDKey()]:
			delete(inserted, m.IDKey())
		default:
			continue
		}
		u.after[at] = append(u.after[at], j)
	}
}

// write spells the updated tape.
func (u *update) write() ([]byte, error) {
	var out []byte
	header, err := u.header()
	if err != nil {
		return nil, err
	}
	out = append(append(out, header...), '\n')
	prev, prevAt := uint64(1), int64(0)
	renamed := map[string][]byte{} // live id of an inserted request → its id in the tape
	emit := func(ri int) error {
		for _, j := range u.after[ri] {
			f := u.rp.Live[j]
			f.Seq, f.At = prev, prevAt
			f.Raw = u.requestID(&f, renamed)
			f.SetHead(wire.Reframe(f.Head(), len(f.Raw)))
			var err error
			if out, err = tape.AppendLine(out, u.t.Session, &f); err != nil {
				return fmt.Errorf("write inserted frame: %w", err)
			}
		}
		return nil
	}
	if err := emit(-1); err != nil {
		return nil, err
	}
	for i := range u.t.Frames {
		if !u.drop[i] {
			rec := &u.t.Frames[i]
			prev, prevAt = u.t.Seqs[i], rec.At
			var f *frame.Frame
			if j, ok := u.replace[i]; ok {
				c := u.rp.Live[j]
				f = &c
				f.Raw = u.requestID(f, renamed)
				f.SetHead(wire.Reframe(f.Head(), len(f.Raw)))
			} else if u.exit && rec.Event == frame.EventExit {
				c := *rec
				f = &c
				f.SetEnd("", nil)
				if e := exitOf(u.rp.Live); e != nil {
					f.SetEnd(e.Signal(), e.Code())
				}
			}
			if f == nil {
				out = append(append(out, u.t.Lines[i]...), '\n')
			} else {
				f.Seq, f.At = prev, rec.At
				var err error
				if out, err = tape.AppendLine(out, u.t.Session, f); err != nil {
					return nil, fmt.Errorf("write changed frame seq %d: %w", prev, err)
				}
			}
		}
		if err := emit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// requestID gives a live request (or the host's answer to one) the id it
// has in the tape: the recorded id of the request it was answered as, or,
// for one the recording did not have, its own id unless a recorded request
// uses that id already.
func (u *update) requestID(f *frame.Frame, renamed map[string][]byte) []byte {
	m := message.Parse(f.Raw)
	switch {
	case f.Dir == frame.Out && m.Kind == message.Request:
		if rs, ok := u.rp.Pairs[f.Seq]; ok {
			if ri, ok := u.recIdx[rs]; ok {
				rm := message.Parse(u.t.Frames[ri].Raw)
				return withID(f.Raw, rm.ID)
			}
			return f.Raw
		}
		if !u.ids[m.IDKey()] {
			return f.Raw
		}
		id := []byte(strconv.Quote("tapedeck-new-" + strconv.Itoa(len(renamed)+1)))
		renamed[m.IDKey()] = id
		return withID(f.Raw, id)
	case f.Dir == frame.In && m.IsReply():
		if id, ok := renamed[m.IDKey()]; ok {
			return withID(f.Raw, id)
		}
	}
	return f.Raw
}

// withID returns raw (a JSON object) with its top-level "id" member's value
// replaced by id; raw itself when it has none or is not an object.
func withID(raw, id []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return raw
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw
		}
		if key == "id" {
			end := int(dec.InputOffset())
			start := end - len(v)
			out := append([]byte(nil), raw[:start]...)
			out = append(out, id...)
			return append(out, raw[end:]...)
		}
	}
	return raw
}

// header keeps the tape's header line unless the counts, the exit or the
// fingerprint the update changes are in it.
func (u *update) header() ([]byte, error) {
	var before, after frame.Counts
	var bytesBefore, bytesAfter frame.Counts
	count := func(c, b *frame.Counts, f *frame.Frame) {
		if !f.IsEvent() {
			c.Add(f.Dir, 1)
			b.Add(f.Dir, int64(len(f.Raw)))
		}
	}
	for i := range u.t.Frames {
		f := &u.t.Frames[i]
		count(&before, &bytesBefore, f)
		if u.drop[i] {
			continue
		}
		if j, ok := u.replace[i]; ok {
			f = &u.rp.Live[j]
		}
		count(&after, &bytesAfter, f)
	}
	for _, js := range u.after {
		for _, j := range js {
			count(&after, &bytesAfter, &u.rp.Live[j])
		}
	}
	newPrint := u.rp.Fingerprint != nil && !sameFingerprint(u.rp.Fingerprint, u.t.Session.Fingerprint)
	if before == after && bytesBefore == bytesAfter && !u.exit && !newPrint {
		return u.t.Header, nil
	}
	meta := *u.t.Session
	if newPrint {
		meta.Fingerprint = u.rp.Fingerprint
	}
	meta.Frames.In += after.In - before.In
	meta.Frames.Out += after.Out - before.Out
	meta.Frames.Err += after.Err - before.Err
	meta.Bytes.In += bytesAfter.In - bytesBefore.In
	meta.Bytes.Out += bytesAfter.Out - bytesBefore.Out
	meta.Bytes.Err += bytesAfter.Err - bytesBefore.Err
	if u.exit {
		if e := exitOf(u.rp.Live); e != nil {
			meta.Exit = frame.Exit{Code: e.Code(), Signal: e.Signal()}
		}
	}
	var b bytes.Buffer
	tw, err := tape.NewWriter(&b, &meta)
	if err != nil {
		return nil, err
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// sameFingerprint reports whether a and b spell the same JSON.
func sameFingerprint(a, b *frame.Fingerprint) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func exitOf(frames []frame.Frame) *frame.Frame {
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].Event == frame.EventExit {
			return &frames[i]
		}
	}
	return nil
}

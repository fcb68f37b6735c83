// Package diff owns the comparison of what a plugin said in a recording with
// what it says in a replay: it normalises frames (JSON values, not bytes;
// plugin request ids by order; ignore rules), aligns the two sequences so that
// a missing, an extra, a moved and a changed frame are told apart, names the
// JSON paths that changed (a long string with a word diff, one of several
// lines with a line diff), and renders each change once, by the seqs of
// its frames, with a unified line diff of the pretty-printed JSON. It
// reads frames, never a database, and is the only package that imports
// go-diff.
package diff

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

// Kind names a kind of difference.
type Kind string

// Kinds of difference.
const (
	Changed Kind = "changed" // the same message (kind and method) with other content
	Missing Kind = "missing" // recorded, not said in the replay
	Extra   Kind = "extra"   // said in the replay, not in the recording
	Moved   Kind = "moved"   // said in both, in another order
	Exit    Kind = "exit"    // the plugin ended differently
)

// Options tunes a comparison.
type Options struct {
	// Strict compares bytes: member order and white space matter.
	Strict bool
	// CompareStderr compares stderr lines too (they are always shown), as a
	// stream of their own: their order among themselves counts, their
	// interleaving with stdout does not.
	CompareStderr bool
	// Ignore reports whether the value at path (segments such as "params",
	// "[3]", "label") of a message with method should be left out. For a
	// response the method is the one of the request it answers. Nil ignores
	// nothing. It is asked about paths at most MaxDepth segments long, in
	// a slice it must not keep.
	Ignore func(method string, path []string) bool
	// Pair names the recorded plugin request (by seq) that a live plugin
	// request (by seq) stands for: the two compare with the same id.
	// Replay passes the pairing it answered by. Nil pairs the k-th live
	// request of a method with the k-th recorded one.
	Pair func(liveSeq uint64) (recordedSeq uint64, ok bool)
	// Mask, when set, rewrites every string value and every line that is
	// not JSON, on both sides, before they are compared or shown: replay
	// uses it to make redaction placeholders match.
	Mask func(string) string
	// Names name the two sides in what is rendered; empty: "recorded" and
	// "replayed".
	Names [2]string
	// Panel is the method of the plugin's messages whose params hold the
	// tree of a panel (the host profile's PanelMethod): a change in one is
	// also named by the nodes of the tree that hold it (Difference.Nodes).
	// "" names none.
	Panel string
}

// Change is one value that differs inside a changed frame.
type Change struct {
	// Path spells Segments for a person, as ignore rules do
	// ("params.tree.children[1].text"), bounded: a segment longer than
	// maxSegment bytes is cut (…) and named by its length and a hash, and
	// a path longer than maxPath bytes loses its middle segments (…).
	Path string `json:"path"`
	// Old and New are the values as JSON text, "" when absent; a value
	// longer than 120 characters is cut (…), two long strings both to a
	// window that starts a few words before their first difference.
	Old string `json:"old"`
	New string `json:"new"`
	// Words is, for two strings too long to show whole or of several
	// lines, their word diff: the whole of both, in pieces.
	Words []Span `json:"words,omitempty"`
	// Lines is, for two strings of which one has several lines, their line
	// diff.
	Lines []Span `json:"lines,omitempty"`
	// Segments is the path as concrete segments ("params", "[3]", …).
	Segments []string `json:"-"`
	// full is both values whole: changes alike have the same.
	full string
}

// Difference is one difference between the recording and the replay.
type Difference struct {
	Kind     Kind     `json:"kind"`
	Dir      string   `json:"dir"`
	Method   string   `json:"method,omitempty"`
	What     string   `json:"what"`               // e.g. "request tools/call", "response to initialize"
	Recorded *Side    `json:"recorded,omitempty"` // nil for extra
	Live     *Side    `json:"live,omitempty"`     // nil for missing
	Changes  []Change `json:"changes,omitempty"`
	// MoreChanges counts the changes found past the first MaxChanges,
	// which Changes holds: they are counted, not made.
	MoreChanges int `json:"moreChanges,omitempty"`
	// Nodes names the UI nodes that hold the changes of a panel's tree
	// (see Options.Panel).
	Nodes []string `json:"nodes,omitempty"`
	// Unified is the unified diff of the pretty-printed JSON, a string of
	// several lines written one line of it per line (see display).
	Unified string `json:"unified,omitempty"`
}

// Side is one frame of a difference.
type Side struct {
	Seq   uint64 `json:"seq"`
	At    int64  `json:"at"`
	Index int    `json:"index"` // position among the compared frames, from 1
	Raw   string `json:"raw,omitempty"`
	// Pretty is the frame as indented JSON (its line as it is when it is
	// not JSON); <, > and & are not escaped.
	Pretty string          `json:"-"`
	JSON   json.RawMessage `json:"-"`
	key    string          // normalised content, for move detection
	// display is Pretty with each string of several lines split at its
	// line breaks (see display): what Unified diffs.
	display string
}

// Result is the outcome of a comparison.
type Result struct {
	// Differences are those kept: the first MaxKept (within MaxKeptBytes).
	Differences []Difference `json:"differences"`
	// More counts the differences found past those kept (before moves
	// were told from them).
	More     int       `json:"more,omitempty"`
	Compared [2]int    `json:"compared"` // frames compared: recorded, live
	Names    [2]string `json:"-"`        // the two sides, as Options named them
}

// What a comparison keeps of its differences, so that two sessions that
// differ in every frame cost bounded memory (500,000 differences of a
// 116 MB tape had held 1.3 GB): the rest are counted (Result.More).
const (
	MaxKept      = 10_000
	MaxKeptBytes = 32 << 20
)

// MaxChanges is how many changes a difference lists (Difference.Changes):
// the rest are counted (Difference.MoreChanges), so that two frames whose
// every leaf differs cost bounded work, memory and output (the first
// difference is always kept, whatever MaxKeptBytes says).
const MaxChanges = 1_000

// Same reports whether nothing differs.
func (r *Result) Same() bool { return r.Count() == 0 }

// Count is how many differences were found, kept or not.
func (r *Result) Count() int { return len(r.Differences) + r.More }

// size is about what d holds, as MaxKeptBytes counts it.
func (d *Difference) size() int {
	n := 256 + len(d.What) + len(d.Method) + len(d.Unified)
	for _, s := range []*Side{d.Recorded, d.Live} {
		if s != nil {
			n += len(s.Raw) + len(s.Pretty) + len(s.JSON) + len(s.key)
			if s.display != s.Pretty { // most often one string
				n += len(s.display)
			}
		}
	}
	for i := range d.Changes {
		c := &d.Changes[i]
		n += 64 + len(c.Path) + len(c.Old) + len(c.New) + len(c.full) + 32*(len(c.Words)+len(c.Lines)+len(c.Segments))
		for _, sp := range c.Words {
			n += len(sp.Text)
		}
		for _, sp := range c.Lines {
			n += len(sp.Text)
		}
	}
	for _, nd := range d.Nodes {
		n += len(nd)
	}
	return n
}

// item is one compared frame, normalised: small, as there is one per
// frame of both timelines; what a difference shows is made again from
// the frame (see tree).
type item struct {
	f     *frame.Frame
	sum   contentSum // of the normalised content: equal sums are the same frame
	cls   *class
	index int32  // position among the compared frames, from 1
	id    string // the id it compares with, "" for its own
}

// class is what the items of one kind and method share.
type class struct {
	align  string // kind and method: frames that can be "changed" into each other
	what   string
	method string
}

// contentSum identifies a frame's normalised content: 128 bits of two
// seeded hashes, so that a million frames are aligned without keeping a
// copy of each (two different contents share a sum with a chance of about
// n²/2¹²⁹).
type contentSum [2]uint64

// comparison is one call of Frames: its options, and what normalise
// shares between frames.
type comparison struct {
	opts    Options
	names   [2]string
	seeds   [2]maphash.Seed
	classes map[class]*class
	byKind  map[message.Kind]map[string]*class
	// classBytes is what the classes made take: at maxClassBytes they are
	// let go and made anew (the items that hold one keep it), since a
	// crafted stream can name a method of its own in every line.
	classBytes int
	// kept and keptBytes are the differences kept so far (see keep), more
	// those found past them.
	kept, keptBytes, more int
	scratch               []byte
	// held: the frames read stay as they are (see compare), and an item
	// holds its frame itself.
	held bool
}

// maxClassBytes bounds what a comparison keeps of the classes it made.
const maxClassBytes = 4 << 20

func (c *comparison) sum(b []byte) contentSum {
	return contentSum{maphash.Bytes(c.seeds[0], b), maphash.Bytes(c.seeds[1], b)}
}

// class returns the one *class equal to k.
func (c *comparison) class(k class) *class {
	if p, ok := c.classes[k]; ok {
		return p
	}
	size := len(k.align) + len(k.what) + 2*len(k.method) + 64 // a class, and its method as byKind's key
	if c.classBytes+size > maxClassBytes {
		clear(c.classes)
		clear(c.byKind)
		c.classBytes = 0
	}
	c.classBytes += size
	p := &k
	c.classes[k] = p
	return p
}

// classOf is the class of a message of kind and method (for a response,
// the method of the request it answers), its strings made once per class,
// not per frame.
func (c *comparison) classOf(kind message.Kind, name []byte) *class {
	if p, ok := c.byKind[kind][string(name)]; ok {
		return p
	}
	method := string(name)
	k := class{method: method}
	switch kind {
	case message.Request:
		k.what = "request " + method
	case message.Notification:
		k.what = "notification " + method
	default:
		k.what = "response"
		if kind == message.ErrorReply {
			k.what = "error response"
		}
		if method != "" {
			k.what += " to " + method
		}
	}
	k.align = "out:" + kind.String() + ":" + method
	if kind == message.ErrorReply {
		k.align = "out:response:" + method
	}
	p := c.class(k)
	if c.byKind[kind] == nil {
		c.byKind[kind] = map[string]*class{}
	}
	c.byKind[kind][method] = p
	return p
}

// Frames compares the plugin's side of two timelines (recorded, live):
// stdout lines, stderr lines when asked (as a stream of their own), and the
// exit. It is Stream over frames held in memory, which its items hold
// without a copy.
func Frames(recorded, live []frame.Frame, opts Options) Result {
	return compare(Slice(recorded), Slice(live), opts, Window, nil, true)
}

// normaliser reads one side's frames, in order, into the items of one
// stream (stdout, or stderr): what normalise shares between the frames of
// a side.
type normaliser struct {
	c      *comparison
	stderr bool // the stream is stderr; else stdout
	// requestID names each plugin request's comparable id.
	requestID func(f *frame.Frame, method string) string
	// hostCalls are the requests this side's host sent, by id, to name
	// the responses that answer them (the host's ids are its own: one
	// counter for all its plugins, so a response compares by the request
	// it answers): at most MaxHostCalls of them, the oldest let go first.
	hostCalls *recent.Map[hostCall]
	// hostN counts the side's host requests by method, to number them:
	// as bounded as hostCalls, since a crafted tape's methods are its own.
	hostN *recent.Map[int]
	n     int32  // items so far
	exit  string // how the side ended so far (see exitOf)
}

// hostCall is what a response to one of the host's requests compares as.
type hostCall struct{ method, id string }

// MaxHostCalls and MaxHostCallBytes bound what a reader of a timeline
// remembers of a side's host requests to know a response by (the
// comparison here, the filters' method scopes): so many requests, taking
// so many bytes of ids and methods. A response to an older one is known
// by no request.
const (
	MaxHostCalls     = 1 << 16
	MaxHostCallBytes = 2 << 20
)

func (c *comparison) normaliser(stderr bool, requestID func(*frame.Frame, string) string) *normaliser {
	return &normaliser{c: c, stderr: stderr, requestID: requestID, exit: "no exit",
		hostCalls: recent.New(MaxHostCalls, MaxHostCallBytes, func(h hostCall) int { return len(h.method) + len(h.id) }),
		hostN:     recent.New(MaxHostCalls, MaxHostCallBytes, func(int) int { return 8 }),
	}
}

// add reads f, the side's next frame, and returns its item when the
// stream compares it. The item holds a copy of f, unless the comparison's
// frames are held (Frames'): f itself may be reused once add returns.
func (n *normaliser) add(f *frame.Frame) (item, bool) {
	c := n.c
	opts := &c.opts
	if f.IsEvent() {
		if e := exitOf(f); e != "" {
			n.exit = e
		}
		return item{}, false
	}
	if f.Dir == frame.Err {
		if !n.stderr {
			return item{}, false
		}
		n.n++
		it := item{f: c.itemFrame(f), index: n.n, cls: c.class(class{what: "stderr line", align: "err"})}
		it.sum = c.rawSum("raw:err:", f.Raw)
		return it, true
	}
	m := message.ReadEnvelope(f.Raw)
	if f.Dir == frame.In {
		if m.Kind == message.Request {
			method := string(m.Method)
			k, _ := n.hostN.Get(method)
			n.hostN.Put(method, k+1)
			n.hostCalls.Put(message.IDKey(m.ID), hostCall{method, fmt.Sprintf("%s #%d", method, k+1)})
		}
		return item{}, false
	}
	if n.stderr {
		return item{}, false
	}
	n.n++
	it := item{f: c.itemFrame(f), index: n.n}
	if m.Kind == message.Stray || m.Kind == message.Blank {
		it.sum = c.rawSum("raw:out:", f.Raw)
		it.cls = c.class(class{align: "out:" + m.Kind.String(), what: "stray output"})
		return it, true
	}
	hasID := false
	switch m.Kind {
	case message.Request:
		// Plugin ids are the plugin's: compared as what they stand for.
		it.id, hasID = n.requestID(f, string(m.Method)), true
		it.cls = c.classOf(m.Kind, m.Method)
	case message.Notification:
		it.cls = c.classOf(m.Kind, m.Method)
	case message.Response, message.ErrorReply:
		hc, ok := n.hostCalls.Get(message.IDKey(m.ID))
		if ok {
			it.id, hasID = hc.id, true
		}
		it.cls = c.classOf(m.Kind, []byte(hc.method))
	}
	var idTok *string
	if hasID {
		idTok = &it.id
	}
	raw := c.line(f)
	switch {
	case opts.Strict:
		if idTok != nil && len(m.ID) > 0 {
			raw = bytes.Replace(raw, m.ID, []byte(strconv.Quote(*idTok)), 1)
		}
		c.scratch = append(append(c.scratch[:0], "raw:"...), raw...)
		it.sum = c.sum(c.scratch)
	case opts.Ignore == nil:
		// The fast way: the canonical spelling, no tree.
		if key, ok := canonical(append(c.scratch[:0], "json:"...), raw, idTok); ok {
			c.scratch = key
			it.sum = c.sum(key)
			break
		}
		fallthrough
	default:
		if v := c.tree(it); v != nil {
			js, _ := json.Marshal(v) // maps marshal with sorted keys
			c.scratch = append(append(c.scratch[:0], "json:"...), js...)
		} else {
			c.scratch = append(append(c.scratch[:0], "raw:out:"...), raw...)
		}
		it.sum = c.sum(c.scratch)
	}
	return it, true
}

// itemFrame is what an item holds of f while it is in a window: f itself when
// the comparison's frames are held, else a copy that owns its bytes.
func (c *comparison) itemFrame(f *frame.Frame) *frame.Frame {
	if c.held {
		return f
	}
	k := *f
	k.Raw = bytes.Clone(f.Raw)
	return &k
}

// rawSum is the sum of a line compared as text (masked), after prefix.
func (c *comparison) rawSum(prefix string, raw []byte) contentSum {
	c.scratch = append(c.scratch[:0], prefix...)
	if c.opts.Mask != nil {
		c.scratch = append(c.scratch, c.opts.Mask(string(raw))...)
	} else {
		c.scratch = append(c.scratch, raw...)
	}
	return c.sum(c.scratch)
}

// line is the JSON line of f as it is compared: without a "\r" at its end,
// and masked.
func (c *comparison) line(f *frame.Frame) []byte {
	raw := bytes.TrimSuffix(f.Raw, []byte("\r"))
	if c.opts.Mask != nil && bytes.Contains(raw, []byte(maskMark)) {
		raw = []byte(c.opts.Mask(string(raw)))
	}
	return raw
}

// maskMark is what every redaction placeholder starts with: a line without
// it has nothing to mask.
const maskMark = "«redacted:"

// tree is the item's value as a tree, decoded from its frame (only
// differences and ignore rules need it): its id replaced, and what the
// ignore rules name pruned. Nil for a line that is not JSON.
func (c *comparison) tree(it item) any {
	var v any
	raw := c.line(it.f)
	if !utf8.Valid(raw) {
		// As package message reads the line, and canonical spells it.
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	if obj, ok := v.(map[string]any); ok && it.id != "" {
		obj["id"] = it.id
	}
	if ignore := c.opts.Ignore; ignore != nil {
		method := it.cls.method
		v = prune(v, func(p []string) bool { return ignore(method, p) })
	}
	return v
}

// ignored replaces an ignored value, so that its presence still shows.
const ignored = "«ignored»"

// prune returns v with every value whose path ignore accepts replaced;
// ignore is asked about paths at most MaxDepth long (what lies deeper is
// compared whole, as it is), with a slice it must not keep.
func prune(v any, ignore func([]string) bool) any {
	p := pruner{ignore: ignore}
	return p.value(v)
}

type pruner struct {
	path   []string
	ignore func([]string) bool
}

func (p *pruner) value(v any) any {
	if len(p.path) > 0 && p.ignore(p.path) {
		return ignored
	}
	if len(p.path) >= MaxDepth {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p.path = append(p.path, k)
			x[k] = p.value(e)
			p.path = p.path[:len(p.path)-1]
		}
	case []any:
		for i, e := range x {
			p.path = append(p.path, "["+strconv.Itoa(i)+"]")
			x[i] = p.value(e)
			p.path = p.path[:len(p.path)-1]
		}
	}
	return v
}

// align aligns the two sequences by content (see script) and classifies
// what is left; budget is script's.
func (c *comparison) align(a, b []item, budget int) []Difference {
	return detectMoves(c.differences(a, b, c.edits(a, b, budget)))
}

// edits is the alignment of a and b by content (see script); budget is
// script's.
func (c *comparison) edits(a, b []item, budget int) []edit {
	ids := map[contentSum]int32{}
	toIDs := func(items []item) []int32 {
		out := make([]int32, len(items))
		for i, it := range items {
			id, ok := ids[it.sum]
			if !ok {
				id = int32(len(ids))
				ids[it.sum] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := toIDs(a), toIDs(b)
	return script(ia, ib, len(ids), budget)
}

// differences classifies what edits leave of a and b: within each gap
// between equal runs, changed frames paired (see pairChanged), the rest
// missing or extra. Moves are not told yet (see detectMoves).
func (c *comparison) differences(a, b []item, edits []edit) []Difference {
	var out []Difference
	var missing, extra []item
	flush := func() {
		out = append(out, c.pairChanged(&missing, &extra)...)
	}
	i, j := 0, 0
	for _, e := range edits {
		switch e.op {
		case opEqual:
			flush()
			i, j = i+e.n, j+e.n
		case opDelete:
			missing = append(missing, a[i:i+e.n]...)
			i += e.n
		case opInsert:
			extra = append(extra, b[j:j+e.n]...)
			j += e.n
		}
	}
	flush()
	return out
}

// pairChanged pairs, in order, missing and extra frames of the same kind and
// method inside one gap of the alignment: those are changed frames (each
// missing frame with the first extra one of its kind not yet paired). The
// rest stay missing or extra. It empties both lists.
func (c *comparison) pairChanged(missing, extra *[]item) []Difference {
	if len(*missing) == 0 && len(*extra) == 0 {
		return nil
	}
	var out []Difference
	used := make([]bool, len(*extra))
	// The extra frames of each kind, in order: the first not yet paired
	// is the first of its list.
	byAlign := map[string][]int{}
	for j, e := range *extra {
		byAlign[e.cls.align] = append(byAlign[e.cls.align], j)
	}
	for _, m := range *missing {
		// A difference past what the comparison keeps is counted, not made.
		if js := byAlign[m.cls.align]; len(js) > 0 {
			used[js[0]] = true
			byAlign[m.cls.align] = js[1:]
			if !c.counted() {
				out = c.keep(out, c.changed(m, (*extra)[js[0]]))
			}
			continue
		}
		if !c.counted() {
			out = c.keep(out, Difference{Kind: Missing, Dir: m.f.Dir.String(), Method: m.cls.method, What: m.cls.what, Recorded: c.side(m, nil)})
		}
	}
	for j, e := range *extra {
		if !used[j] && !c.counted() {
			out = c.keep(out, Difference{Kind: Extra, Dir: e.f.Dir.String(), Method: e.cls.method, What: e.cls.what, Live: c.side(e, nil)})
		}
	}
	*missing, *extra = (*missing)[:0], (*extra)[:0]
	sort.SliceStable(out, func(i, j int) bool { return position(out[i]) < position(out[j]) })
	return out
}

func position(d Difference) int {
	if d.Recorded != nil {
		return d.Recorded.Index
	}
	return d.Live.Index
}

// detectMoves turns a missing frame and an extra frame with the same content
// into one moved frame.
func detectMoves(diffs []Difference) []Difference {
	byKey := map[string][]int{}
	for i, d := range diffs {
		if d.Kind == Extra {
			byKey[d.Live.key] = append(byKey[d.Live.key], i)
		}
	}
	drop := map[int]bool{}
	for i := range diffs {
		d := &diffs[i]
		if d.Kind != Missing {
			continue
		}
		cands := byKey[d.Recorded.key]
		for k, j := range cands {
			if drop[j] {
				continue
			}
			d.Kind, d.Live = Moved, diffs[j].Live
			drop[j] = true
			byKey[d.Recorded.key] = cands[k+1:]
			break
		}
	}
	out := diffs[:0]
	for i, d := range diffs {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return out
}

// side is the Side of it, whose tree is v (nil: decoded here).
func (c *comparison) side(it item, v any) *Side {
	s := &Side{Seq: it.f.Seq, At: it.f.At, Index: int(it.index), Raw: string(it.f.Raw), key: string(sumBytes(it.sum))}
	if v == nil {
		v = c.tree(it)
	}
	if v != nil {
		var split bool
		s.display, split = display(v)
		s.Pretty = s.display
		if split {
			s.Pretty = Indent(v)
		}
		s.JSON = json.RawMessage(appendCompact(nil, v))
	} else {
		s.Pretty = string(it.f.Raw)
		s.display = s.Pretty
	}
	return s
}

// sumBytes spells a sum as 16 bytes.
func sumBytes(s contentSum) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(make([]byte, 0, 16), s[0]), s[1])
}

func (c *comparison) changed(m, e item) Difference {
	mv, ev := c.tree(m), c.tree(e)
	d := Difference{Kind: Changed, Dir: m.f.Dir.String(), Method: m.cls.method, What: m.cls.what, Recorded: c.side(m, mv), Live: c.side(e, ev)}
	if mv != nil && ev != nil {
		d.Changes, d.MoreChanges = paths(mv, ev)
		if c.opts.Panel != "" && m.cls.method == c.opts.Panel {
			d.Nodes = changedNodes(ev, d.Changes)
		}
	}
	d.Unified = Unified(d.Recorded.display+"\n", d.Live.display+"\n", c.names[0], c.names[1])
	return d
}

// changedNodes names, for a panel's tree whose values at changes differ, the
// UI nodes that hold them (in the live tree): "params.tree.children[0]
// (text "Howdy")", once each, in order.
func changedNodes(v any, changes []Change) []string {
	var out []string
	seen := map[string]bool{}
	spell := speller{}
	for _, c := range changes {
		// The node is the deepest object on the path that has a "type".
		var node any
		var at []string
		cur := v
		for i, seg := range c.Segments {
			if o, ok := cur.(map[string]any); ok {
				if _, typed := o["type"]; typed {
					node, at = o, c.Segments[:i]
				}
				cur = o[seg]
				continue
			}
			if a, ok := cur.([]any); ok {
				k, err := strconv.Atoi(strings.Trim(seg, "[]"))
				if err != nil || k < 0 || k >= len(a) {
					break
				}
				cur = a[k]
				continue
			}
			break
		}
		if o, ok := cur.(map[string]any); ok {
			if _, typed := o["type"]; typed {
				node, at = o, c.Segments
			}
		}
		o, ok := node.(map[string]any)
		if !ok {
			continue
		}
		p := spell.path(at)
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p+" ("+describeNode(o)+")")
	}
	return out
}

// describeNode is a UI node in a few words: its type, id and label or text.
func describeNode(o map[string]any) string {
	s := fmt.Sprint(o["type"])
	if id, ok := o["id"].(string); ok {
		s += " #" + id
	}
	for _, k := range []string{"label", "text", "title"} {
		if v, ok := o[k].(string); ok {
			q := marshal(v)
			if r := []rune(q); len(r) > 40 {
				q = string(r[:37]) + "…\""
			}
			return s + " " + q
		}
	}
	return s
}

// paths lists the leaf values that differ between a and b, the first
// MaxChanges of them, and counts the rest: values nested MaxDepth deep
// count as leaves, compared as their canonical JSON.
func paths(a, b any) ([]Change, int) {
	w := pathWalker{spell: speller{}}
	w.walk(a, b)
	return w.out, w.more
}

// pathWalker walks two trees side by side; path is the current path, one
// slice for the whole walk, copied only into a change. Past MaxChanges
// changes, more counts them.
type pathWalker struct {
	path  []string
	out   []Change
	more  int
	spell speller
}

// full reports whether the walker holds MaxChanges changes, and if so
// counts one more.
func (w *pathWalker) full() bool {
	if len(w.out) < MaxChanges {
		return false
	}
	w.more++
	return true
}

func (w *pathWalker) walk(a, b any) {
	if len(w.path) < MaxDepth {
		switch x := a.(type) {
		case map[string]any:
			if y, ok := b.(map[string]any); ok {
				w.members(x, y)
				return
			}
		case []any:
			if y, ok := b.([]any); ok {
				w.elements(x, y)
				return
			}
		}
	}
	if sameScalar(a, b) {
		return
	}
	ja, jb := marshal(a), marshal(b)
	if ja == jb || w.full() {
		return
	}
	p := slices.Clone(w.path)
	c := Change{Path: w.spell.path(p), Segments: p, full: ja + "\x00" + jb}
	sa, oka := a.(string)
	sb, okb := b.(string)
	if oka && okb {
		stringChange(&c, sa, sb)
	} else {
		c.Old, c.New = brief(a), brief(b)
	}
	w.out = append(w.out, c)
}

// sameScalar reports whether a and b are the same string, number,
// boolean or null, which marshal spells alike: most leaves of two frames
// that differ, known without spelling them.
func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

func (w *pathWalker) members(x, y map[string]any) {
	keys := make([]string, 0, len(x)+len(y))
	for k := range x {
		keys = append(keys, k)
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		va, oka := x[k]
		vb, okb := y[k]
		w.path = append(w.path, k)
		switch {
		case !oka && !w.full():
			w.out = append(w.out, w.added(vb))
		case !okb && !w.full():
			w.out = append(w.out, w.removed(va))
		case !oka, !okb:
		default:
			w.walk(va, vb)
		}
		w.path = w.path[:len(w.path)-1]
	}
}

func (w *pathWalker) elements(x, y []any) {
	for i := 0; i < max(len(x), len(y)); i++ {
		w.path = append(w.path, "["+strconv.Itoa(i)+"]")
		switch {
		case i >= len(x) && !w.full():
			w.out = append(w.out, w.added(y[i]))
		case i >= len(y) && !w.full():
			w.out = append(w.out, w.removed(x[i]))
		case i >= len(x), i >= len(y):
		default:
			w.walk(x[i], y[i])
		}
		w.path = w.path[:len(w.path)-1]
	}
}

// added and removed are the changes of a value only one side has, at
// the walker's path.
func (w *pathWalker) added(v any) Change {
	p := slices.Clone(w.path)
	return Change{Path: w.spell.path(p), New: brief(v), Segments: p, full: "\x00" + marshal(v)}
}

func (w *pathWalker) removed(v any) Change {
	p := slices.Clone(w.path)
	return Change{Path: w.spell.path(p), Old: brief(v), Segments: p, full: marshal(v) + "\x00"}
}

// What a spelled path (Change.Path) holds, so that a change costs bounded
// bytes however long the member names that lead to it: a segment of more
// than maxSegment bytes keeps its first segmentHead bytes and is named by
// its length and a hash (two long names stay apart); a path of more than
// maxPath bytes keeps its first and last segments, half of it each.
const (
	maxSegment  = 64
	segmentHead = 32
	maxPath     = 1024
)

// spellPath spells a path the way ignore rules do,
// params.tree.children[1].text, bounded (see maxSegment and maxPath): each
// segment as spell spells it (spellSegment, or what it made before).
func spellPath(p []string, spell func(string) string) string {
	if len(p) == 0 {
		return "(whole message)"
	}
	pieces := make([]string, len(p))
	total := 0
	for i, s := range p {
		s = spell(s)
		if i > 0 && !strings.HasPrefix(s, "[") {
			s = "." + s
		}
		pieces[i] = s
		total += len(s)
	}
	if total <= maxPath {
		return strings.Join(pieces, "")
	}
	// The first segments and the last ones, each within half of maxPath
	// (a spelled segment is far shorter: at least one of the first).
	head, n := 0, 0
	for head < len(pieces) && n+len(pieces[head]) <= maxPath/2 {
		n += len(pieces[head])
		head++
	}
	tail, n := len(pieces), 0
	for tail > head && n+len(pieces[tail-1]) <= maxPath/2 {
		n += len(pieces[tail-1])
		tail--
	}
	return strings.Join(pieces[:head], "") + "…" + strings.Join(pieces[tail:], "")
}

// spellSegment is a segment as a spelled path shows it: whole up to
// maxSegment bytes, else its head, its length and an FNV-1a hash of it,
// "kkkk…(20000 bytes #1a2b3c4d)".
func spellSegment(s string) string {
	if len(s) <= maxSegment {
		return s
	}
	cut := segmentHead
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	h := fnv.New32a() // once a segment (speller)
	io.WriteString(h, s)
	return fmt.Sprintf("%s…(%d bytes #%08x)", s[:cut], len(s), h.Sum32())
}

// speller spells paths (see spellPath), each long segment once: the
// changes of a frame share the segments that lead to them.
type speller map[string]string

func (sp speller) path(p []string) string {
	return spellPath(p, func(s string) string {
		if len(s) <= maxSegment {
			return s
		}
		v, ok := sp[s]
		if !ok {
			v = spellSegment(s)
			sp[s] = v
		}
		return v
	})
}

// brief is v as JSON, cut to briefMax characters.
func brief(v any) string {
	s := marshal(v)
	if r := []rune(s); len(r) > briefMax {
		s = string(r[:briefMax-3]) + "…"
	}
	return s
}

// compareExit compares how the two sides ended (see exitOf).
func compareExit(ra, la string) (Difference, bool) {
	if ra == la || ra == "no exit" { // an interrupted recording has no exit to compare
		return Difference{}, false
	}
	return Difference{Kind: Exit, What: fmt.Sprintf("exit: recorded %s, replayed %s", ra, la)}, true
}

// exitOf is how an exit event says the plugin ended ("code 0", "signal
// SIGTERM"); "" for another event, or an exit that says neither.
func exitOf(f *frame.Frame) string {
	if f.Event != frame.EventExit {
		return ""
	}
	if f.Signal() != "" {
		return "signal " + f.Signal()
	}
	if f.Code() != nil {
		return "code " + strconv.Itoa(*f.Code())
	}
	return ""
}

package htmlreport

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/message"
)

//go:embed assets
var assets embed.FS

// Finding is one result of tapedeck check, marked on its frame.
type Finding struct {
	Seq     uint64 // the frame concerned; 0 for the session as a whole
	Level   string // error, warning, info
	Rule    string // the rule's stable id
	Method  string // the method concerned, "" when none
	Message string // one line: what is wrong and what the host does
	Path    string // where inside the message, "" for the whole line
}

// ReplayInput is what a replay report shows.
type ReplayInput struct {
	// Name is what was replayed: the tape's path or the session's id.
	Name string
	// Meta and Recorded are the recording; Live is the replay's timeline
	// (nil when the replay could not run). Each is read once, as
	// Session reads its frames.
	Meta     *frame.Session
	Recorded Frames
	Live     Frames
	// Diff compares Recorded with Live.
	Diff diff.Result
	// Notes says what did not go as recorded; Unmatched lists the plugin's
	// requests the recording had no answer for.
	Notes     []string
	Unmatched []string
	Elapsed   time.Duration
	// Err is why the replay could not run, "" when it ran.
	Err string
}

// IndexEntry is one line of an index page: a tape and its report.
type IndexEntry struct {
	Name   string // the tape
	Href   string // its report, relative to the index; "" when there is none
	Status string // ok, fail, skip or error (could not run)
	Detail string // one line: the verdict, or why it was skipped
}

// Frames calls fn with a session's frames in order, stopping at fn's first
// error, which it returns. The frame is valid only during the call. A
// store's Frames method, bound to one session, is one.
type Frames func(fn func(*frame.Frame) error) error

// Slice is Frames over frames held in memory.
func Slice(frames []frame.Frame) Frames {
	return func(fn func(*frame.Frame) error) error {
		for i := range frames {
			if err := fn(&frames[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// Session writes the report of one session to w: its timeline, its panels
// and the findings given (nil for none). meta may be nil. It reads frames
// once and streams the page: it holds one frame at a time and the
// requests still waiting for an answer (a response names its request, and
// the page gives each request its answer as it loads), never the whole
// timeline, so a session of millions of frames is written in little
// memory.
func Session(w io.Writer, meta *frame.Session, frames Frames, findings []Finding) error {
	title := "tapedeck · session " + sessionName(meta)
	// Findings are marked on their frames by index: give each its frame's
	// index as the frames go by (the first frame of its seq), walking the
	// findings in the order of their seqs.
	index := make([]int32, len(findings))
	bySeq := make([]int32, 0, len(findings))
	for i := range findings {
		index[i] = -1
		if findings[i].Seq != 0 {
			bySeq = append(bySeq, int32(i))
		}
	}
	slices.SortStableFunc(bySeq, func(a, b int32) int { return cmp.Compare(findings[a].Seq, findings[b].Seq) })
	next := 0
	at := func(f *frame.Frame, i int) {
		for next < len(bySeq) && findings[bySeq[next]].Seq < f.Seq {
			next++ // a seq no frame has
		}
		for k := next; k < len(bySeq) && findings[bySeq[k]].Seq == f.Seq; k++ {
			if index[bySeq[k]] < 0 {
				index[bySeq[k]] = int32(i)
			}
		}
	}
	return streamPage(w, title, "session", func(sw *streamWriter) {
		sw.raw(`{"kind":"session","title":`)
		sw.json(title)
		sw.raw(`,"meta":`)
		sw.json(meta)
		sw.raw(`,"frames":`)
		sw.timeline(frames, at)
		if len(findings) > 0 {
			sw.raw(`,"findings":[`)
			for i, f := range findings {
				if i > 0 {
					sw.raw(",")
				}
				sw.json(findingData{Seq: f.Seq, Index: int(index[i]), Level: f.Level, Rule: f.Rule, Method: f.Method, Message: f.Message, Path: f.Path})
			}
			sw.raw("]")
		}
		sw.raw("}")
	})
}

// Replay writes the report of one replay to w: the summary, each difference
// with both sides, and both timelines. It streams the page as Session
// does: it reads each timeline once, holds one frame at a time and the
// kept differences, and writes the JSON that encoding/json writes of the
// whole page (pageData).
func Replay(w io.Writer, r ReplayInput) error {
	name := r.Name
	if name == "" {
		name = sessionName(r.Meta)
	}
	rd := &replayData{
		Name:      name,
		Same:      r.Err == "" && r.Diff.Same(),
		Compared:  r.Diff.Compared,
		ElapsedMS: r.Elapsed.Milliseconds(),
		Notes:     r.Notes,
		Unmatched: r.Unmatched,
		Error:     r.Err,
		Ran:       r.Live != nil || r.Err == "",
	}
	if s := r.Diff.NotKept(); s != "" {
		rd.Notes = append(slices.Clip(rd.Notes), s)
	}
	if r.Recorded == nil {
		r.Recorded = Slice(nil)
	}
	if r.Live == nil {
		r.Live = Slice(nil)
	}
	// The frames the differences name, by seq: each gets the index of
	// the last frame of its seq in its timeline as the frames go by.
	recIndex, liveIndex := map[uint64]int{}, map[uint64]int{}
	for _, d := range r.Diff.Differences {
		if d.Recorded != nil {
			recIndex[d.Recorded.Seq] = -1
		}
		if d.Live != nil {
			liveIndex[d.Live.Seq] = -1
		}
	}
	// replayData's members, in its order, up to its timeline and its
	// differences.
	summary, err := json.Marshal(rd)
	if err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	summary, ok := bytes.CutSuffix(summary, []byte(`,"live":null,"diffs":null}`))
	if !ok {
		return fmt.Errorf("encode report data: the summary does not end with its timeline and differences: %.80s", summary)
	}
	seen := func(index map[uint64]int) func(*frame.Frame, int) {
		return func(f *frame.Frame, i int) {
			if _, ok := index[f.Seq]; ok {
				index[f.Seq] = i
			}
		}
	}
	title := "tapedeck · replay of " + name
	return streamPage(w, title, "replay", func(sw *streamWriter) {
		sw.raw(`{"kind":"replay","title":`)
		sw.json(title)
		sw.raw(`,"meta":`)
		sw.json(r.Meta)
		sw.raw(`,"frames":`)
		sw.timeline(r.Recorded, seen(recIndex))
		sw.raw(`,"replay":`)
		sw.raw(string(summary))
		sw.raw(`,"live":`)
		sw.timeline(r.Live, seen(liveIndex))
		sw.raw(`,"diffs":[`)
		for i, d := range r.Diff.Differences {
			if i > 0 {
				sw.raw(",")
			}
			sw.json(differenceData(d, recIndex, liveIndex))
		}
		sw.raw(`]}}`)
	})
}

// streamPage writes a page whose data body writes as it goes: the page
// around it, and the data in pieces.
func streamPage(w io.Writer, title, kind string, body func(*streamWriter)) error {
	head, tail, err := pageParts(title, kind)
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	sw := &streamWriter{w: w}
	body(sw)
	sw.flush()
	if sw.err != nil {
		return sw.err
	}
	_, err = w.Write(tail)
	return err
}

// streamWriter writes a page's JSON in pieces of about 64 KiB, keeping
// the first error.
type streamWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (s *streamWriter) raw(text string) {
	s.buf = append(s.buf, text...)
	s.spill()
}

// json writes v as encoding/json's Marshal does. It escapes <, > and &
// as \u003c, \u003e and \u0026, and U+2028 and U+2029 always, so no
// frame content can end the page's script element or start markup; the
// page's Content-Security-Policy allows only the page's own script (by
// hash) and no network at all.
func (s *streamWriter) json(v any) {
	js, err := json.Marshal(v)
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("encode report data: %w", err)
	}
	s.buf = append(s.buf, js...)
	s.spill()
}

func (s *streamWriter) spill() {
	if len(s.buf) >= 64<<10 {
		s.flush()
	}
}

func (s *streamWriter) flush() {
	if s.err == nil && len(s.buf) > 0 {
		if _, err := s.w.Write(s.buf); err != nil {
			s.err = err
		}
	}
	s.buf = s.buf[:0]
}

// timeline writes frames' entries as a JSON array, telling at (when set)
// each frame's index before its entry.
func (s *streamWriter) timeline(frames Frames, at func(f *frame.Frame, i int)) {
	if s.err != nil {
		return // the page is not written on: nothing more is read
	}
	t := newTimeline()
	s.raw("[")
	err := frames(func(f *frame.Frame) error {
		if s.err != nil {
			return s.err
		}
		i := t.n
		if at != nil {
			at(f, i)
		}
		d := t.entry(f)
		if i > 0 {
			s.raw(",")
		}
		s.json(&d)
		return s.err
	})
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("write report: %w", err)
	}
	s.raw("]")
}

// Index writes a page that links the reports of a test run.
func Index(w io.Writer, title string, entries []IndexEntry) error {
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return fmt.Errorf("read report assets: %w", err)
	}
	t, err := template.ParseFS(assets, "assets/index.html")
	if err != nil {
		return fmt.Errorf("parse index template: %w", err)
	}
	v := struct {
		Title   string
		CSS     template.CSS
		Entries []IndexEntry
	}{title, template.CSS(css), entries}
	if err := t.Execute(w, v); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}

func sessionName(meta *frame.Session) string {
	switch {
	case meta == nil:
		return "(no metadata)"
	case meta.Name != "" && meta.ID != "":
		return meta.Name + " (" + meta.ID + ")"
	case meta.Name != "":
		return meta.Name
	}
	return meta.ID
}

// pageData is the JSON the page's script renders.
type pageData struct {
	Kind     string         `json:"kind"` // session or replay
	Title    string         `json:"title"`
	Meta     *frame.Session `json:"meta"`
	Frames   []frameData    `json:"frames"`
	Findings []findingData  `json:"findings,omitempty"`
	Replay   *replayData    `json:"replay,omitempty"`
}

// frameData is one timeline entry, with short member names: a session can
// hold 100,000 of them.
type frameData struct {
	S uint64 `json:"s"`           // seq
	T int64  `json:"t"`           // at, nanoseconds since the start
	D string `json:"d"`           // in, out, err, or ev for a lifecycle event
	K string `json:"k"`           // kind: request, notification, response, error, stray, blank, stderr, event
	M string `json:"m,omitempty"` // method; a response carries its request's
	I string `json:"i,omitempty"` // the id as written
	R string `json:"r,omitempty"` // the line's text (with \xNN escapes when B)
	// B marks a line that is not valid UTF-8: R shows its bytes with
	// escapes, U is what the host parses (invalid bytes replaced).
	B bool   `json:"b,omitempty"`
	U string `json:"u,omitempty"`
	J bool   `json:"j,omitempty"` // the line is a JSON value
	P int    `json:"p,omitempty"` // on a response: 1 + the index of its request (the page gives the request 1 + its answer's); 0 for none
	L int64  `json:"l,omitempty"` // on a response: nanoseconds since its request
	E string `json:"e,omitempty"` // an event, described
	N bool   `json:"n,omitempty"` // a last line without a newline
	C int64  `json:"c,omitempty"` // a line stored cut: its full length
	X string `json:"x,omitempty"` // why a line is stray
}

type findingData struct {
	Seq     uint64 `json:"seq"`
	Index   int    `json:"index"` // the frame's index in frames, -1 when none
	Level   string `json:"level"`
	Rule    string `json:"rule"`
	Method  string `json:"method,omitempty"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

type replayData struct {
	Name      string      `json:"name"`
	Same      bool        `json:"same"`
	Ran       bool        `json:"ran"`
	Compared  [2]int      `json:"compared"`
	ElapsedMS int64       `json:"elapsedMs"`
	Notes     []string    `json:"notes,omitempty"`
	Unmatched []string    `json:"unmatched,omitempty"`
	Error     string      `json:"error,omitempty"`
	Live      []frameData `json:"live"`
	Diffs     []diffData  `json:"diffs"`
}

type diffData struct {
	Kind    string       `json:"kind"`
	Dir     string       `json:"dir,omitempty"`
	Method  string       `json:"method,omitempty"`
	What    string       `json:"what"`
	Rec     *sideData    `json:"rec,omitempty"`
	Live    *sideData    `json:"live,omitempty"`
	Changes []changeData `json:"changes,omitempty"`
	Lines   []diffLine   `json:"lines,omitempty"`
	// Panel marks a ui/setPanel call: the page draws both panels, with the
	// elements at Outline (paths as in data-path) outlined.
	Panel   bool     `json:"panel,omitempty"`
	Outline []string `json:"outline,omitempty"`
}

type sideData struct {
	Seq   uint64 `json:"seq"`
	Index int    `json:"index"` // in its timeline's frames; -1 when not there
	Pos   int    `json:"pos"`   // among the compared frames, from 1
	Raw   string `json:"raw"`
	B     bool   `json:"b,omitempty"`
	U     string `json:"u,omitempty"`
}

type changeData struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// timeliner derives the timeline entries of a session's frames, in one
// pass: a response's entry names the request it answers and its latency
// (a request's cannot name its answer, which comes later: the page gives
// it, as the playground's does live). It keeps the most recent requests
// not yet answered (recent.Calls; one forgotten is paired with nothing).
type timeliner struct {
	n       int
	pending *recent.Calls[pendingReq]
}

type pendingReq struct {
	i      int
	at     int64
	method string // cut to recent.MaxName
}

func newTimeline() *timeliner {
	return &timeliner{pending: recent.NewCalls(func(q pendingReq) int { return len(q.method) + 24 })}
}

// waiting notes a request at index i; answered takes the request a reply
// going in direction dir answers, if one waits.
func (t *timeliner) waiting(dir frame.Dir, m *message.Message, q pendingReq) {
	q.method = recent.Name(m.Method)
	t.pending.Asked(byte(dir), m.IDKey(), q)
}

func (t *timeliner) answered(dir frame.Dir, m *message.Message) (pendingReq, bool) {
	return t.pending.Answered(byte(opposite(dir)), m.IDKey())
}

// entry is the timeline entry of the next frame.
func (t *timeliner) entry(f *frame.Frame) frameData {
	i := t.n
	t.n++
	var d frameData
	d.S, d.T = f.Seq, f.At
	if f.IsEvent() {
		d.D, d.K, d.E = "ev", "event", f.Describe()
		return d
	}
	d.D = f.Dir.String()
	d.R, d.B = text(f.Raw)
	if d.B {
		d.U = strings.ToValidUTF8(string(f.Raw), "\uFFFD")
	}
	d.N = f.NoEOL
	if f.Cut != nil {
		d.C = f.Cut.Len
	}
	if f.Dir == frame.Err {
		d.K = "stderr"
		return d
	}
	m := message.Parse(f.Raw)
	d.K, d.M, d.X = m.Kind.String(), m.Method, m.Problem
	line := bytes.TrimSuffix(f.Raw, []byte("\r"))
	if d.B {
		line = []byte(d.U)
	}
	d.J = m.Kind != message.Blank && json.Valid(line)
	if len(m.ID) > 0 {
		d.I = string(m.ID)
	}
	switch {
	case m.Kind == message.Request:
		t.waiting(f.Dir, &m, pendingReq{i: i, at: f.At})
	case m.IsReply():
		if q, ok := t.answered(f.Dir, &m); ok {
			d.P = q.i + 1
			d.L = f.At - q.at
			d.M = q.method
		}
	}
	return d
}

func opposite(d frame.Dir) frame.Dir {
	if d == frame.In {
		return frame.Out
	}
	return frame.In
}

// text is a line as text: itself when it is valid UTF-8, else with each
// invalid byte written \xNN (and each backslash doubled), escaped true.
func text(raw []byte) (s string, escaped bool) {
	if utf8.Valid(raw) {
		return string(raw), false
	}
	var b strings.Builder
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		switch {
		case n == 1 && r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, raw[0])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.Write(raw[:n])
		}
		raw = raw[n:]
	}
	return b.String(), true
}

// differenceData is one difference as the page shows it: both sides, the
// changed paths, the pretty JSON aligned line by line, and for ui/setPanel
// the elements to outline.
func differenceData(d diff.Difference, recIndex, liveIndex map[uint64]int) diffData {
	dd := diffData{Kind: string(d.Kind), Dir: d.Dir, Method: d.Method, What: d.What}
	dd.Rec = sideOf(d.Recorded, recIndex)
	dd.Live = sideOf(d.Live, liveIndex)
	for _, c := range d.Changes {
		dd.Changes = append(dd.Changes, changeData{Path: c.Path, Old: c.Old, New: c.New})
	}
	if d.MoreChanges > 0 {
		dd.Changes = append(dd.Changes, changeData{Path: fmt.Sprintf("… and %d more changes", d.MoreChanges)})
	}
	var a, b string
	if d.Recorded != nil {
		a = d.Recorded.Pretty
	}
	if d.Live != nil {
		b = d.Live.Pretty
	}
	if d.Recorded != nil || d.Live != nil {
		dd.Lines = lineDiff(a, b)
	}
	dd.Panel = isSetPanel(d.Recorded) || isSetPanel(d.Live)
	if dd.Panel {
		switch d.Kind {
		case diff.Changed:
			seen := map[string]bool{}
			for _, c := range d.Changes {
				if p, ok := elementPath(c.Segments); ok && !seen[p] {
					seen[p] = true
					dd.Outline = append(dd.Outline, p)
				}
			}
		case diff.Missing, diff.Extra:
			dd.Outline = []string{"tree"}
		}
	}
	return dd
}

func sideOf(s *diff.Side, index map[uint64]int) *sideData {
	if s == nil {
		return nil
	}
	sd := &sideData{Seq: s.Seq, Pos: s.Index, Index: -1}
	if i, ok := index[s.Seq]; ok {
		sd.Index = i // -1 when its timeline has no frame of it
	}
	sd.Raw, sd.B = text([]byte(s.Raw))
	if sd.B {
		sd.U = strings.ToValidUTF8(s.Raw, "\uFFFD")
	}
	return sd
}

func isSetPanel(s *diff.Side) bool {
	if s == nil {
		return false
	}
	m := message.Parse([]byte(s.Raw))
	return m.IsCall() && m.Method == "ui/setPanel"
}

// elementPath turns the segments of a changed path in a ui/setPanel
// message ("params", "tree", "children", "[2]", "label") into the page's
// data-path spelling ("tree.children[2].label"); ok is false for a path
// outside the tree. A change to params as a whole outlines the whole tree.
func elementPath(segs []string) (string, bool) {
	switch {
	case len(segs) == 0, segs[0] != "params":
		return "", false
	case len(segs) == 1:
		return "tree", true
	case segs[1] != "tree":
		return "", false
	}
	var b strings.Builder
	for i, s := range segs[1:] {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// dataMark stands for the page's data while the template is rendered, so
// that the data can be streamed between the two halves.
const dataMark = "/*tapedeck:data*/"

// pageParts renders the page around its data: what comes before the data
// and what comes after. The data is JSON written with encoding/json's HTML
// escaping (see writePage).
func pageParts(title, kind string) (head, tail []byte, err error) {
	var page bytes.Buffer
	if err := renderPage(&page, title, kind, dataMark); err != nil {
		return nil, nil, err
	}
	head, tail, ok := bytes.Cut(page.Bytes(), []byte(dataMark))
	if !ok {
		return nil, nil, fmt.Errorf("write report: the page template has no place for the data")
	}
	return head, tail, nil
}

// renderPage renders the page template with data (JSON) as the page's data.
func renderPage(w io.Writer, title, kind, data string) error {
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return fmt.Errorf("read report assets: %w", err)
	}
	page, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return fmt.Errorf("read report assets: %w", err)
	}
	js, err := Script(page)
	if err != nil {
		return err
	}
	t, err := template.ParseFS(assets, "assets/page.html")
	if err != nil {
		return fmt.Errorf("parse page template: %w", err)
	}
	sum := sha256.Sum256(js)
	v := struct {
		Title string
		Kind  string
		CSP   string
		CSS   template.CSS
		JS    template.JS
		Data  template.JS
	}{
		Title: title,
		Kind:  kind,
		CSP:   "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
		CSS:   template.CSS(css),
		JS:    template.JS(js),
		Data:  template.JS(data),
	}
	if err := t.Execute(w, v); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Script is the script of a page that draws panels or timelines: the
// host's icons (assets/icons.js, generated), the shared panel renderer
// (assets/panel.js: helpers, UI trees, badge,
// toasts) and timeline (assets/timeline.js), then the page's own code, in
// one strict function scope. The report and the playground both draw
// with it, so there is one copy of each.
func Script(page []byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("(function () {\n  'use strict';\n")
	for _, name := range []string{"assets/icons.js", "assets/panel.js", "assets/timeline.js"} {
		part, err := assets.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read report assets: %w", err)
		}
		b.Write(part)
		b.WriteByte('\n')
	}
	b.Write(page)
	b.WriteString("\n})();\n")
	return b.Bytes(), nil
}

// CSS is the style sheet of the report, which the playground's page uses
// too (panels, timeline, findings).
func CSS() ([]byte, error) {
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return nil, fmt.Errorf("read report assets: %w", err)
	}
	return css, nil
}

// Live derives timeline entries one frame at a time, as a session happens
// (the playground's live timeline): a response's entry names its request
// (P) and latency (L) as in a report; a request's entry cannot name its
// response yet, so a page sets it when the response comes.
type Live struct{ tl *timeliner }

// NewLive returns a Live for a new session.
func NewLive() *Live { return &Live{tl: newTimeline()} }

// Entry is the timeline entry of the session's next frame, as JSON in
// the report's own shape (the page's script reads it as it reads a
// report's frames).
func (l *Live) Entry(f *frame.Frame) (json.RawMessage, error) {
	d := l.tl.entry(f)
	js, err := json.Marshal(&d)
	if err != nil {
		return nil, fmt.Errorf("encode frame %d: %w", f.Seq, err)
	}
	return js, nil
}

package present

// The timeline renderer of show: one line (or JSON object, or the raw bytes)
// per frame, in constant memory.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/recent"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/message"
	"github.com/tapedeck/tapedeck/tape"
)

// Direction filter values beyond the three streams.
const dirEvent = frame.Dir(0)

// Filter says which frames a timeline shows.
type Filter struct {
	dirs   map[frame.Dir]bool // nil: all
	kinds  map[string]bool    // nil: all
	method string             // "" : all
}

// Kinds are the kinds of frame a Filter knows.
var Kinds = []string{"request", "notification", "response", "error", "stray", "blank", "stderr", "event"}

// ParseFilter reads show's --dir, --kind (each repeatable or comma
// separated) and --method GLOB; an error names the flag and what it wants.
func ParseFilter(dirs, kinds []string, method string) (*Filter, error) {
	f := &Filter{method: method}
	for _, v := range splitList(dirs) {
		if f.dirs == nil {
			f.dirs = map[frame.Dir]bool{}
		}
		switch v {
		case "in":
			f.dirs[frame.In] = true
		case "out":
			f.dirs[frame.Out] = true
		case "err":
			f.dirs[frame.Err] = true
		case "event":
			f.dirs[dirEvent] = true
		default:
			return nil, fmt.Errorf("--dir %q: want in, out, err or event", v)
		}
	}
	for _, v := range splitList(kinds) {
		if !slices.Contains(Kinds, v) {
			return nil, fmt.Errorf("--kind %q: want one of %s", v, strings.Join(Kinds, ", "))
		}
		if f.kinds == nil {
			f.kinds = map[string]bool{}
		}
		f.kinds[v] = true
	}
	if f.method != "" {
		if _, err := path.Match(f.method, ""); err != nil {
			return nil, fmt.Errorf("--method %q: %v", f.method, err)
		}
	}
	return f, nil
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (f *Filter) keep(r *row) bool {
	if f.dirs != nil {
		d := r.f.Dir
		if r.f.IsEvent() {
			d = dirEvent
		}
		if !f.dirs[d] {
			return false
		}
	}
	if f.kinds != nil && !f.kinds[r.kind] {
		return false
	}
	if f.method != "" {
		if r.method == "" {
			return false
		}
		if f.method != "*" {
			if ok, _ := path.Match(f.method, r.method); !ok {
				return false
			}
		}
	}
	return true
}

// SummaryWidth is how many cells of summary a line to w gets: what the
// terminal's width (or $COLUMNS) leaves after the fixed columns, at least
// 40; 100 when neither says.
func SummaryWidth(w io.Writer) int {
	if n, ok := screen.Width(w); ok {
		return max(n-fixedWidth, 40)
	}
	return 100
}

type request struct {
	seq    uint64
	at     int64
	method string
}

// row is one frame with what show derives from it.
type row struct {
	f       *frame.Frame
	msg     message.Message
	kind    string
	method  string
	id      string
	req     *request // the request a response answers
	latency time.Duration
}

// TimelineOptions say how a Timeline prints.
type TimelineOptions struct {
	Filter *Filter // nil: every frame
	// Raw prints each frame's exact bytes; JSON one object per frame;
	// neither, a line per frame.
	Raw, JSON bool
	Color     bool // ANSI colours (a terminal)
	Width     int  // cells of summary (SummaryWidth); 0: 100
	// Warn is where a frame stored cut is said of, once, with Raw.
	Warn io.Writer
	// Findings are the live check's findings stored with the session
	// (record --lint): each is shown under its frame.
	Findings []check.Finding
}

// Timeline prints frames one by one, in constant memory: show's output.
type Timeline struct {
	w       *bufio.Writer
	filter  *Filter
	raw     bool
	json    bool
	color   bool
	width   int
	pending *recent.Calls[request]
	printed bool
	cutWarn bool
	stderr  io.Writer
	buf     []byte
	safe    []byte // buf as escape.JSON writes it
	// findings are the live check's findings stored with the session
	// (record --lint), by frame.
	findings map[uint64][]check.Finding
	// methodWidth is the method column's: wMethod for an Agentty session,
	// wMethodWide for peers whose methods run longer (MCP, LSP), where a
	// longer one is cut. progress reads the profile's progress
	// notifications, nil when it has none.
	methodWidth int
	progress    progressReader
}

// progressReader is a profile that reads its progress notifications.
type progressReader interface {
	ReadProgress(method string, params []byte) (profile.Progress, bool)
}

// NewTimeline makes the timeline that writes to w (buffered: Flush ends
// it).
func NewTimeline(w io.Writer, opt TimelineOptions) *Timeline {
	p := &Timeline{
		w:       bufio.NewWriterSize(w, 64<<10),
		filter:  opt.Filter,
		raw:     opt.Raw,
		json:    opt.JSON,
		color:   opt.Color,
		width:   opt.Width,
		pending: recent.NewCalls(func(q request) int { return len(q.method) + 16 }),
		stderr:  opt.Warn,

		methodWidth: wMethod,
	}
	if p.filter == nil {
		p.filter = &Filter{}
	}
	if p.width == 0 {
		p.width = 100
	}
	if p.stderr == nil {
		p.stderr = io.Discard
	}
	if len(opt.Findings) > 0 {
		p.findings = map[uint64][]check.Finding{}
		for _, f := range opt.Findings {
			p.findings[f.Seq] = append(p.findings[f.Seq], f)
		}
	}
	return p
}

// Flush writes out what is buffered.
func (p *Timeline) Flush() error { return p.w.Flush() }

// Header prints the session's header lines (its line, the clock and the
// fingerprint, the findings about the whole session, the column heads);
// nothing with Raw or JSON.
func (p *Timeline) Header(m *frame.Session) {
	if prof := profile.Of(m); profile.IsServer(prof) {
		p.progress, _ = prof.(progressReader)
		p.methodWidth = wMethodWide
		p.width = max(p.width-(wMethodWide-wMethod), 40)
	}
	if p.raw || p.json {
		return
	}
	p.header(m)
	for _, f := range p.findings[0] {
		fmt.Fprintf(p.w, "%s %s %s: %s\n", p.paint(levelColor(f.Level), "⚑"), f.Level, f.Rule, escape.Text(f.Message))
	}
}

func levelColor(l check.Level) string {
	if l == check.Error {
		return cRed
	}
	return cYellow
}

// derive classifies f and pairs a response with its request: plugin
// requests (out) are answered on stdin (in) and host requests the other way.
func (p *Timeline) derive(f *frame.Frame) row {
	r := row{f: f}
	if f.IsEvent() {
		r.kind = "event"
		return r
	}
	if f.Dir == frame.Err {
		r.kind = "stderr"
		return r
	}
	r.msg = message.Parse(f.Raw)
	r.kind = r.msg.Kind.String()
	r.method = r.msg.Method
	if len(r.msg.ID) > 0 {
		r.id = compactJSON(r.msg.ID)
	}
	switch {
	case r.msg.Kind == message.Request:
		// A method is kept cut (recent.Name): a crafted session's can be
		// as long as its lines.
		p.pending.Asked(byte(f.Dir), r.id, request{seq: f.Seq, at: f.At, method: recent.Name(r.method)})
	case r.msg.IsReply():
		other := frame.In
		if f.Dir == frame.In {
			other = frame.Out
		}
		if q, ok := p.pending.Answered(byte(other), r.id); ok {
			r.req = &q
			r.method = q.method
			r.latency = time.Duration(f.At - q.at)
		}
	}
	return r
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// Frame prints one frame (when the filter keeps it); the first line goes
// out at once.
func (p *Timeline) Frame(f *frame.Frame) error {
	r := p.derive(f)
	if !p.filter.keep(&r) {
		return nil
	}
	switch {
	case p.raw:
		if f.IsEvent() {
			return nil
		}
		if f.Cut != nil && !p.cutWarn {
			p.cutWarn = true
			fmt.Fprintf(p.stderr, "tapedeck: show: frame %d was stored cut: only its first %d of %d bytes are printed\n", f.Seq, len(f.Raw), f.Cut.Len)
		}
		p.w.Write(f.Raw)
		if !f.NoEOL {
			p.w.WriteByte('\n')
		}
	case p.json:
		p.buf = appendFrameJSON(p.buf[:0], &r)
		if fs := p.findings[f.Seq]; len(fs) > 0 {
			js, _ := json.Marshal(fs)
			p.buf = append(p.buf[:len(p.buf)-2], `,"findings":`...)
			p.buf = append(append(p.buf, js...), "}\n"...)
		}
		p.safe = escape.JSON(p.safe[:0], p.buf)
		p.w.Write(p.safe)
	default:
		p.line(&r)
	}
	if !p.printed {
		// The first line goes out at once; the rest in buffered blocks.
		p.printed = true
		return p.w.Flush()
	}
	return nil
}

// ANSI colours, used only on a terminal.
const (
	cReset   = "\x1b[0m"
	cDim     = "\x1b[2m"
	cRed     = "\x1b[31m"
	cGreen   = "\x1b[32m"
	cYellow  = "\x1b[33m"
	cMagenta = "\x1b[35m"
	cCyan    = "\x1b[36m"
	cBold    = "\x1b[1m"
)

// Column widths of the timeline; the summary takes the rest.
const (
	wSeq    = 6
	wTime   = 12
	wDir    = 3
	wKind   = 13
	wMethod = 22
	// wMethodWide is the method column of MCP and LSP sessions, whose
	// methods run to 30 characters and more (textDocument/publishDiagnostics,
	// notifications/resources/list_changed).
	wMethodWide = 32
	wID         = 8
	wLatency    = 9
	fixedWidth  = wSeq + wTime + wDir + wKind + wMethod + wID + wLatency
)

func (p *Timeline) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return code + s + cReset
}

// col pads s (already escaped) to width cells, then paints it.
func (p *Timeline) col(code, s string, width int) string {
	s = screen.Pad(s, width)
	if !p.color || code == "" {
		return s
	}
	t := strings.TrimRight(s, " ")
	return code + t + cReset + s[len(t):]
}

func (p *Timeline) header(m *frame.Session) {
	parts := []string{"session " + escape.Text(m.ID)}
	if m.Name != "" {
		parts = append(parts, escape.Text(m.Name))
	}
	if l := PeerLabel(SessionPeer(m)); l != "" {
		parts = append(parts, l)
	}
	parts = append(parts, "started "+m.Started.Local().Format("2006-01-02 15:04:05"), SessionStatus(m.Status, m.Lost))
	if m.Unreadable > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of its spool unreadable", m.Unreadable))
	}
	if x := ExitLabel(m.Exit); x != "-" {
		parts = append(parts, "exit "+x)
	}
	fmt.Fprintln(p.w, p.paint(cBold, strings.Join(parts, " · ")))
	if l := LostLine(m.Lost); l != "" {
		fmt.Fprintln(p.w, l)
	}
	if m.Error != "" {
		fmt.Fprintln(p.w, "error        "+escape.Text(m.Error))
	}
	for _, l := range TriageHeader(m) {
		fmt.Fprintln(p.w, escape.Text(l))
	}
	hdr := p.col("", "SEQ", wSeq) + p.col("", "TIME", wTime) + p.col("", "", wDir) + p.col("", "KIND", wKind) +
		p.col("", "METHOD", p.methodWidth) + p.col("", "ID", wID) + p.col("", "LATENCY", wLatency) + "SUMMARY"
	fmt.Fprintln(p.w, p.paint(cDim, hdr))
}

func (p *Timeline) line(r *row) {
	f := r.f
	var arrow, dirColor, kindColor string
	switch {
	case f.IsEvent():
		arrow, dirColor = "•", cMagenta
	case f.Dir == frame.In:
		arrow, dirColor = "→", cCyan
	case f.Dir == frame.Out:
		arrow, dirColor = "←", cGreen
	default:
		arrow, dirColor = "!", cYellow
	}
	kind := r.kind
	switch r.kind {
	case "error", "stray":
		kindColor = cRed
	case "event":
		kind = f.Event.String()
		kindColor = cMagenta
	}
	lat := ""
	if r.req != nil {
		lat = formatLatency(r.latency)
	}
	p.w.WriteString(p.col(cDim, strconv.FormatUint(f.Seq, 10), wSeq))
	p.w.WriteString(p.col(cDim, formatAt(f.At), wTime))
	p.w.WriteString(p.col(dirColor, arrow, wDir))
	p.w.WriteString(p.col(kindColor, kind, wKind))
	method := escape.Text(r.method)
	if p.methodWidth != wMethod {
		method = truncate(method, p.methodWidth-1)
	}
	p.w.WriteString(p.col(cBold, method, p.methodWidth))
	p.w.WriteString(p.col("", escape.Text(truncate(r.id, wID-1)), wID))
	p.w.WriteString(p.col("", lat, wLatency))
	p.w.WriteString(p.summary(r))
	p.w.WriteByte('\n')
	for _, fd := range p.findings[f.Seq] {
		where := ""
		if fd.Path != "" {
			where = " at " + fd.Path
		}
		fmt.Fprintf(p.w, "%*s%s %s %s%s: %s\n", wSeq, "", p.paint(levelColor(fd.Level), "⚑"), fd.Level, fd.Rule, escape.Text(where), escape.Text(fd.Message))
	}
}

// summary is the one-line summary of a row, sanitised.
func (p *Timeline) summary(r *row) string {
	f := r.f
	var s string
	switch {
	case f.IsEvent():
		s = f.Describe()
	case r.kind == "stderr":
		s = truncate(string(f.Raw), p.width)
	case r.msg.Kind == message.Blank:
		s = "(blank line)"
	case r.msg.Kind == message.Stray:
		s = r.msg.Problem + ": " + truncate(string(f.Raw), p.width)
	case r.msg.Kind == message.ErrorReply:
		s = fmt.Sprintf("error %d: %s", r.msg.Error.Code, r.msg.Error.Message)
		if len(r.msg.Error.Data) > 0 {
			s += " " + jsonOneLine(r.msg.Error.Data, p.width)
		}
		s = truncate(s, p.width)
	case r.msg.Kind == message.Response:
		s = jsonOneLine(r.msg.Result, p.width)
	case p.progress != nil && r.msg.Kind == message.Notification && p.progressLine(r, &s):
	default:
		s = jsonOneLine(r.msg.Params, p.width)
	}
	s = escape.Text(s)
	if f.NoEOL {
		s += p.paint(cDim, " [no newline at the end]")
	}
	if f.Cut != nil {
		s += p.paint(cDim, fmt.Sprintf(" [stored cut: %d of %d bytes]", len(f.Raw), f.Cut.Len))
	}
	return s
}

// progressLine sets s to the summary of a progress notification, read by
// the session's profile, and reports whether it was one: what it says of
// the work ("begin 0% Setting up workspace: Loading packages", "2/5 step
// 2"), then its token.
func (p *Timeline) progressLine(r *row, s *string) bool {
	pr, ok := p.progress.ReadProgress(r.msg.Method, r.msg.Params)
	if !ok {
		return false
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	var words []string
	if pr.Kind != "" {
		words = append(words, pr.Kind)
	}
	switch {
	case pr.Percent >= 0:
		words = append(words, num(pr.Percent)+"%")
	case pr.Total >= 0:
		words = append(words, num(pr.Done)+"/"+num(pr.Total))
	case pr.Done >= 0:
		words = append(words, num(pr.Done))
	}
	text := pr.Title
	if pr.Message != "" {
		if text != "" {
			text += ": "
		}
		text += pr.Message
	}
	if text != "" {
		words = append(words, strings.Join(strings.Fields(text), " "))
	}
	words = append(words, "(token "+pr.Token+")")
	*s = truncate(strings.Join(words, " "), p.width)
	return true
}

// jsonOneLine renders a JSON value on one line, white space outside strings
// removed, cut to width characters.
func jsonOneLine(raw []byte, width int) string {
	if len(raw) == 0 {
		return ""
	}
	// The first width+1 characters (lead bytes) of the compact form tell
	// whether it is cut, and where; each takes at most 4 bytes, unless
	// bytes that are not UTF-8 run on, which the next round takes.
	for limit := 4 * (max(width, 0) + 2); ; limit *= 2 {
		b := jsonscan.Compact(nil, raw, limit)
		n := 0
		for i, c := range b {
			if c < 0x80 || c >= 0xc0 {
				n++
			}
			if n > width {
				return truncate(string(b[:i+1]), width)
			}
		}
		if len(b) < limit {
			return string(b)
		}
	}
}

// truncate cuts s to at most width cells, marking a cut with "…".
func truncate(s string, width int) string { return screen.Truncate(s, width) }

// formatAt prints a time since the start as seconds with microseconds.
func formatAt(at int64) string {
	sign := ""
	if at < 0 {
		sign, at = "-", -at
	}
	return fmt.Sprintf("%s%d.%06ds", sign, at/1e9, at%1e9/1e3)
}

func formatLatency(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatLatency(-d)
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// appendFrameJSON appends the --json object of a row: seq, at, dir or
// event, kind, method, id, and for a response the request's seq and the
// latency in nanoseconds, then the bytes as a tape holds them (json, text
// or b64; eol, cut).
func appendFrameJSON(dst []byte, r *row) []byte {
	f := r.f
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, f.Seq, 10)
	dst = append(dst, `,"at":`...)
	dst = strconv.AppendInt(dst, f.At, 10)
	if f.IsEvent() {
		dst = append(dst, `,"kind":"event","event":`...)
		dst = strconv.AppendQuote(dst, f.Event.String())
		if f.Signal() != "" {
			dst = append(dst, `,"signal":`...)
			dst = tape.AppendString(dst, []byte(f.Signal()))
		}
		if f.Code() != nil {
			dst = append(dst, `,"code":`...)
			dst = strconv.AppendInt(dst, int64(*f.Code()), 10)
		}
		return append(dst, "}\n"...)
	}
	dst = append(dst, `,"dir":"`...)
	dst = append(dst, f.Dir.String()...)
	dst = append(dst, `","kind":"`...)
	dst = append(dst, r.kind...)
	dst = append(dst, '"')
	if r.method != "" {
		dst = append(dst, `,"method":`...)
		dst = tape.AppendString(dst, []byte(r.method))
	}
	if r.id != "" {
		dst = append(dst, `,"id":`...)
		dst = append(dst, r.id...)
	}
	if r.req != nil {
		dst = append(dst, `,"request":`...)
		dst = strconv.AppendUint(dst, r.req.seq, 10)
		dst = append(dst, `,"latency":`...)
		dst = strconv.AppendInt(dst, int64(r.latency), 10)
	}
	dst = tape.AppendBytes(dst, f)
	return append(dst, "}\n"...)
}

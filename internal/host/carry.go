package host

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/jsonscan"
	"github.com/tapedeck/tapedeck/message"
)

// Values carried back. A value the plugin chose itself (a task id, a
// pagination cursor, a signed state, a progress token, a registration id)
// differs in every run; when the host later sends it back, a replay that
// resends the recorded one is refused ("Task not found"). The plan finds,
// in the recording, the places of the plugin's messages that hold such
// values (places): those named by Reading.Carry, and those where the
// plugin said first a value that a later host frame holds (the same JSON
// string, at least MinCarried bytes, or an integer of at least MinCarried
// digits, that the host had not said before). A place is the method of
// the message (for a response, of the request it answers) and the
// concrete path of the value in it.
//
// A replay learns the live value at each place when the live frame that
// stands for the recorded one arrives (the answer to the same request,
// the request matched to the recorded one, the same occurrence of a
// notification), and before a later host frame (a request, a notification
// or an answer to the plugin) is written, puts the live value where the
// recorded one was, reframing a header-framed body. A live frame that
// still holds the recorded value somewhere (a tool's name in a list the
// plugin ordered otherwise) teaches nothing: the plugin did not choose it
// anew. Result.Carried lists
// what it learned that differs, for the comparison (Uncarry) and the
// notes.

// MinCarried is how long a value must be for the plan to take it as
// carried by itself: 8 bytes of a string's contents, or 8 digits of an
// integer. Shorter values match by chance all the time (a line number, a
// count, "text", "file"), while values a peer draws to be told apart (UUIDs,
// base32 ids, random decimal tokens, cursors, signatures) are 16 bytes or
// more; a longer value equal on both sides is almost always the same thing
// said twice (an id, or a name the host took from a list), and carrying a
// value that did not change is a no-op. Values at places Reading.Carry
// names are carried whatever their length.
const MinCarried = 8

// maxCarryDepth bounds how deep the places are looked for.
const maxCarryDepth = 64

// Carried is one value the plugin chose itself that a replay learned, and
// that differs from the recorded one.
type Carried struct {
	// Place is where the plugin said it, as a METHOD:PATH rule.
	Place string
	// Recorded and Live are the values as JSON text.
	Recorded, Live string
	// LiveSeq is the live frame that said it, Path its concrete path
	// there.
	LiveSeq uint64
	Path    []string
}

// carrySite is a carried value in a recorded plugin frame.
type carrySite struct {
	path  string // its concrete path, segments joined by pathSep
	key   string // its value (see valueKey)
	token string // its JSON text
	place string // the place, as METHOD:PATH
}

// hostSite is a carried value in a recorded host frame: its token at
// [start, end) of the frame (or of an answer's tail).
type hostSite struct {
	start, end int
	key        string
}

// carryPlan is what a plan knows of the values carried back; nil when a
// recording carries none.
type carryPlan struct {
	// sources are the recorded plugin frames that hold a value at a
	// place, by seq.
	sources map[uint64][]carrySite
	// occ maps a cause (see CauseOf) to the seqs of its recorded frames in
	// order, 0 for an occurrence that holds nothing: how a live reply or
	// notification finds the recorded frame it stands for.
	occ map[string][]uint64
	// host are the recorded host frames that hold a carried value, by seq;
	// tails the same for answers, in their tails, by call index.
	host  map[uint64][]hostSite
	tails map[int32][]hostSite
	// blind are the recorded requests of the plugin that hold carried
	// values in their params, by seq: their params key with those values
	// left out, so that a live request with other values still matches.
	blind map[uint64]string
}

const pathSep = "\x00"

// valueKey is what a carried value is known by: its kind and its
// contents (a string decoded), and whether it is long enough to be taken
// as carried by itself (MinCarried); ok is false for a token that is no
// string or number.
func valueKey(tok []byte) (key string, long, ok bool) {
	k, long, ok := appendKey(nil, tok)
	return string(k), long, ok
}

// appendKey appends tok's key (see valueKey) to dst: a map looked up with
// string(key) allocates nothing.
func appendKey(dst, tok []byte) (key []byte, long, ok bool) {
	if len(tok) == 0 {
		return dst, false, false
	}
	switch c := tok[0]; {
	case c == '"':
		if len(tok) < 2 {
			return dst, false, false
		}
		s := tok[1 : len(tok)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			out, _, ok := jsonscan.Unquote(append(dst, 's'), tok)
			if !ok {
				return dst, false, false
			}
			return out, len(out)-len(dst)-1 >= MinCarried, true
		}
		return append(append(dst, 's'), s...), len(s) >= MinCarried, true
	case c == '-' || '0' <= c && c <= '9':
		digits := 0
		integer := true
		for _, d := range tok {
			switch {
			case '0' <= d && d <= '9':
				digits++
			case d != '-':
				integer = false
			}
		}
		return append(append(dst, 'n'), tok...), integer && digits >= MinCarried, true
	}
	return dst, false, false
}

// leaves calls fn for each string and number inside the params or result
// of the JSON-RPC message b, with its path (params or result first; fn
// must not keep it) and its token b[start:end]. On text that is not JSON
// it reports what it can, never past b's end.
func leaves(b []byte, fn func(path []string, start, end int)) { walkMessage(b, true, fn) }

// values is leaves without the paths (nil each time): what costs most in
// the walk is spelling the member names.
func values(b []byte, fn func(start, end int)) {
	walkMessage(b, false, func(_ []string, s, e int) { fn(s, e) })
}

// walkMessage is leaves, building paths or not.
func walkMessage(b []byte, paths bool, fn func(path []string, start, end int)) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			return
		}
		if b[i] == ',' {
			i++
			continue
		}
		end, ok := jsonscan.SkipString(b, i)
		if !ok {
			return
		}
		name := b[i+1 : end-1]
		i = jsonscan.SkipSpace(b, end)
		if i < len(b) && b[i] == ':' {
			i = jsonscan.SkipSpace(b, i+1)
		}
		if string(name) == "params" || string(name) == "result" {
			var p []string
			if paths {
				p = append(make([]string, 0, 16), string(name))
			}
			i = walkLeaves(b, i, p, paths, fn)
		} else if i, ok = jsonscan.SkipValue(b, i); !ok {
			return
		}
	}
}

// walkLeaves walks the value at b[i] (no white space before it), calling
// fn for each string and number with its path (when paths is set; depth
// levels deep), and returns the index past it. Past maxCarryDepth a value
// is skipped.
func walkLeaves(b []byte, i int, path []string, paths bool, fn func(path []string, start, end int)) int {
	return walkDepth(b, i, path, len(path), paths, fn)
}

func walkDepth(b []byte, i int, path []string, depth int, paths bool, fn func(path []string, start, end int)) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '{', '[':
		if depth >= maxCarryDepth {
			end, _ := jsonscan.SkipValue(b, i)
			return end
		}
		object := b[i] == '{'
		i++
		for n := 0; ; {
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) {
				return i
			}
			switch b[i] {
			case '}', ']':
				return i + 1
			case ',':
				i++
				continue
			}
			var seg string
			if object {
				end, ok := jsonscan.SkipString(b, i)
				if !ok {
					return len(b)
				}
				if paths {
					seg = memberName(b[i:end])
				}
				i = jsonscan.SkipSpace(b, end)
				if i < len(b) && b[i] == ':' {
					i = jsonscan.SkipSpace(b, i+1)
				}
			} else {
				if paths {
					seg = "[" + strconv.Itoa(n) + "]"
				}
				n++
			}
			sub := path
			if paths {
				sub = append(path, seg)
			}
			i = walkDepth(b, i, sub, depth+1, paths, fn)
		}
	case '"':
		end, _ := jsonscan.SkipString(b, i)
		fn(path, i, end)
		return end
	}
	end, ok := jsonscan.SkipValue(b, i)
	if !ok && end == i {
		return i + 1 // not JSON here (a stray ':' or ','): on, a byte at a time
	}
	if c := b[i]; c == '-' || '0' <= c && c <= '9' {
		fn(path, i, end)
	}
	return end
}

// memberName is the name a quoted member name q spells.
func memberName(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	out, _, _ := jsonscan.Unquote(nil, q)
	return string(out)
}

// placeOf spells a place as a METHOD:PATH rule (see package jsonpath).
func placeOf(method string, path []string) string {
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(':')
	for i, seg := range path {
		switch {
		case strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") && seg != "[]":
			b.WriteString(seg)
		case plainName(seg):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		default:
			b.WriteByte('[')
			b.Write(jsonscan.AppendString(nil, seg))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// plainName reports whether a member name is spelled bare in a path.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '-')) {
			return false
		}
	}
	return true
}

// carryFrame is a recorded frame as the carry analysis reads it.
type carryFrame struct {
	f      *frame.Frame
	method string // of a plugin message (a response: its request's)
	cause  string // a plugin frame's (see CauseOf); "" for none
}

// planCarry finds the places and the carried values of a recording (see
// the comment at the top of this file); nil when nothing is carried. It
// reads the recording three times: for the frames and the long values the
// host says (carryFrames), for the places (findPlaces), and for the values
// at the places and where the host sends them back (placeValues).
func planCarry(recorded []frame.Frame, msgs []parsed, rd Reading) *carryPlan {
	frames, hostWords := carryFrames(recorded, msgs)
	if len(hostWords) == 0 && rd.Carry == nil {
		return nil
	}
	places := findPlaces(frames, hostWords, rd)
	if len(places) == 0 && rd.Carry == nil {
		return nil
	}
	cp := placeValues(frames, places, rd)
	if len(cp.sources) == 0 {
		return nil
	}
	return cp
}

// carryFrames are the recording's JSON frames with their methods, and the
// long values the host says (hostWords).
func carryFrames(recorded []frame.Frame, msgs []parsed) (frames []carryFrame, hostWords map[string]bool) {
	var key []byte
	hostMethod := map[string]string{} // host request id → method
	hostWords = map[string]bool{}
	n := 0
	for i := range recorded {
		if f := &recorded[i]; !f.IsEvent() && f.Dir != frame.Err && f.Cut == nil {
			n++
		}
	}
	frames = make([]carryFrame, 0, n)
	for i := range recorded {
		f := &recorded[i]
		if f.IsEvent() || f.Dir == frame.Err || f.Cut != nil {
			continue
		}
		body := bytes.TrimSuffix(f.Raw, []byte("\r"))
		if len(body) == 0 || body[0] != '{' {
			continue
		}
		cf := carryFrame{f: f}
		m := &msgs[i]
		switch {
		case f.Dir == frame.In:
			if m.kind == message.Request { // (parsed when it has an id)
				hostMethod[m.req.IDKey()] = m.req.Method
			}
			values(body, func(s, e int) {
				var long, ok bool
				if key, long, ok = appendKey(key[:0], body[s:e]); ok && long && !hostWords[string(key)] {
					hostWords[string(key)] = true
				}
			})
		case m.kind == message.Request || m.kind == message.Notification:
			cf.method, cf.cause = strings.TrimPrefix(m.cause, "call "), m.cause
		case m.kind.IsReply():
			cf.method, cf.cause = hostMethod[m.id], m.cause
		default:
			continue
		}
		frames = append(frames, cf)
	}
	return frames, hostWords
}

// body is the frame's JSON object, without a closing CR.
func (cf carryFrame) body() []byte { return bytes.TrimSuffix(cf.f.Raw, []byte("\r")) }

// explicit reports whether rd's rules name the place method:path.
func explicit(rd Reading, method string, path []string) bool {
	return rd.Carry != nil && rd.Carry(method, path)
}

// placeFinder finds the places: those named, and where the plugin first
// said a value the host later sent (and had not said before). Without
// rules only long values can be carried, and a plugin frame's paths are
// spelled only when it says one the host says too.
type placeFinder struct {
	rd        Reading
	hostWords map[string]bool   // the long values the host says
	first     map[string]string // candidate value → the place where the plugin said it first
	hostSaid  map[string]bool   // the values the host said so far
	places    map[string]bool   // method + pathSep + path
	key       []byte            // scratch for appendKey
}

// findPlaces is the places of frames (method + pathSep + path).
func findPlaces(frames []carryFrame, hostWords map[string]bool, rd Reading) map[string]bool {
	pf := &placeFinder{rd: rd, hostWords: hostWords, first: map[string]string{}, hostSaid: map[string]bool{}, places: map[string]bool{}}
	for _, cf := range frames {
		if cf.f.Dir == frame.In {
			pf.hostFrame(cf.body())
		} else {
			pf.pluginFrame(cf)
		}
	}
	return pf.places
}

// hostFrame makes a place of each value of a host frame the plugin said
// first, and notes the others as said by the host.
func (pf *placeFinder) hostFrame(body []byte) {
	values(body, func(s, e int) {
		k, long, ok := appendKey(pf.key[:0], body[s:e])
		pf.key = k
		if !ok {
			return
		}
		if place, ok := pf.first[string(k)]; ok {
			pf.places[place] = true
		} else if (long || pf.rd.Carry != nil) && !pf.hostSaid[string(k)] {
			pf.hostSaid[string(k)] = true
		}
	})
}

// candidate reports whether a value the plugin says may be one it chose:
// long, said later by the host and not before, and not said by the
// plugin before.
func (pf *placeFinder) candidate(k []byte, long bool) bool {
	if pf.hostSaid[string(k)] {
		return false
	}
	_, seen := pf.first[string(k)]
	return !seen && long && pf.hostWords[string(k)]
}

// pluginFrame notes where a plugin frame first says each candidate value
// or a value at a named place.
func (pf *placeFinder) pluginFrame(cf carryFrame) {
	body := cf.body()
	if pf.rd.Carry == nil && !pf.anyCandidate(body) {
		return
	}
	leaves(body, func(path []string, s, e int) {
		k, long, ok := appendKey(pf.key[:0], body[s:e])
		pf.key = k
		if ok && (pf.candidate(k, long) || explicit(pf.rd, cf.method, path) && !pf.hostSaid[string(k)]) {
			if _, seen := pf.first[string(k)]; !seen {
				pf.first[string(k)] = cf.method + pathSep + strings.Join(path, pathSep)
			}
		}
	})
}

// anyCandidate reports whether body says a candidate value, without
// spelling its paths.
func (pf *placeFinder) anyCandidate(body []byte) bool {
	any := false
	values(body, func(s, e int) {
		k, long, ok := appendKey(pf.key[:0], body[s:e])
		pf.key = k
		any = any || ok && pf.candidate(k, long)
	})
	return any
}

// valuePlacer finds the values at the places, in the plugin's frames, and
// where the host sends them back.
type valuePlacer struct {
	rd     Reading
	places map[string]bool // method + pathSep + path
	placed map[string]bool // the methods with a place found
	cp     *carryPlan
	// carried are the values carried so far; a short one (a rule's) goes
	// back only under a member of the name it had where the plugin said
	// it (a token as a token), as the same small number or word stands
	// for other things in other places (a line, a version).
	carried  map[string]map[string]bool // value → nil (long), or the names it had
	hostSaid map[string]bool            // the values the host said, not carried
	count    map[string]int             // frames of each cause so far
	key      []byte                     // scratch for appendKey
}

// placeValues is the plan of the values at places in frames.
func placeValues(frames []carryFrame, places map[string]bool, rd Reading) *carryPlan {
	vp := &valuePlacer{
		rd:       rd,
		places:   places,
		placed:   map[string]bool{},
		cp:       &carryPlan{sources: map[uint64][]carrySite{}, occ: map[string][]uint64{}, host: map[uint64][]hostSite{}, blind: map[uint64]string{}},
		carried:  map[string]map[string]bool{},
		hostSaid: map[string]bool{},
		count:    map[string]int{},
	}
	for p := range places {
		m, _, _ := strings.Cut(p, pathSep)
		vp.placed[m] = true
	}
	for _, cf := range frames {
		if cf.f.Dir == frame.Out && cf.cause != "" {
			vp.count[cf.cause]++
		}
		if cf.f.Dir == frame.In {
			vp.hostFrame(cf)
		} else if rd.Carry != nil || vp.placed[cf.method] {
			vp.pluginFrame(cf)
		}
	}
	return vp.cp
}

// hostFrame notes where a host frame holds a value carried so far (a
// short one only under a member of a name it had), and the other values
// as said by the host.
func (vp *valuePlacer) hostFrame(cf carryFrame) {
	body := cf.body()
	leaves(body, func(path []string, s, e int) {
		k, _, ok := appendKey(vp.key[:0], body[s:e])
		vp.key = k
		if !ok {
			return
		}
		names, isCarried := vp.carried[string(k)]
		switch {
		case isCarried && (names == nil || names[lastName(path)]):
			vp.cp.host[cf.f.Seq] = append(vp.cp.host[cf.f.Seq], hostSite{s, e, string(k)})
		case isCarried:
		case !vp.hostSaid[string(k)]:
			vp.hostSaid[string(k)] = true
		}
	})
}

// pluginFrame takes the values at the places of a plugin frame as its
// sites, and those the host had not said as carried.
func (vp *valuePlacer) pluginFrame(cf carryFrame) {
	body := cf.body()
	var sites []carrySite
	leaves(body, func(path []string, s, e int) {
		joined := strings.Join(path, pathSep)
		if !explicit(vp.rd, cf.method, path) && !vp.places[cf.method+pathSep+joined] {
			return
		}
		k, long, ok := valueKey(body[s:e])
		if !ok {
			return
		}
		sites = append(sites, carrySite{path: joined, key: k, token: string(body[s:e]), place: placeOf(cf.method, path)})
		if !vp.hostSaid[k] {
			vp.carry(k, long, lastName(path))
		}
	})
	if len(sites) == 0 {
		return
	}
	vp.addSource(cf, sites)
}

// carry takes the value k as carried: anywhere when long, else under a
// member called name (as well as those it had).
func (vp *valuePlacer) carry(k string, long bool, name string) {
	if long {
		vp.carried[k] = nil
		return
	}
	names, seen := vp.carried[k]
	if seen && names == nil {
		return
	}
	if names == nil {
		names = map[string]bool{}
	}
	names[name] = true
	vp.carried[k] = names
}

// addSource records the sites of a plugin frame, which occurrence of its
// cause it is, and for a request its params key blind to the sites.
func (vp *valuePlacer) addSource(cf carryFrame, sites []carrySite) {
	cp, f := vp.cp, cf.f
	cp.sources[f.Seq] = sites
	n := vp.count[cf.cause]
	occ := cp.occ[cf.cause]
	for len(occ) < n {
		occ = append(occ, 0)
	}
	occ[n-1] = f.Seq
	cp.occ[cf.cause] = occ
	if body := cf.body(); strings.HasPrefix(cf.cause, "call ") && bytes.Contains(body, []byte(`"id"`)) {
		if e := message.ReadEnvelope(body); e.Kind == message.Request {
			cp.blind[f.Seq] = blindKey(e.Params, sites)
		}
	}
}

// lastName is the last member name of a path ("" for none).
func lastName(path []string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if !strings.HasPrefix(path[i], "[") {
			return path[i]
		}
	}
	return ""
}

// blindKey is the params key (see paramsKey) of a request's params with
// the values at the sites' paths left out (null).
func blindKey(params json.RawMessage, sites []carrySite) string {
	if !json.Valid(params) {
		return paramsKey(params)
	}
	at := map[string]bool{}
	for _, s := range sites {
		at[s.path] = true
	}
	// params walked as the member of a message, so that paths start
	// with "params".
	var out []byte
	last := 0
	walkLeaves(params, jsonscan.SkipSpace(params, 0), []string{"params"}, true, func(path []string, s, e int) {
		if at[strings.Join(path, pathSep)] {
			out = append(append(out, params[last:s]...), "null"...)
			last = e
		}
	})
	if out == nil {
		return paramsKey(params)
	}
	return paramsKey(append(out, params[last:]...))
}

// sameBut reports whether live params are those of the plugin's recorded
// request seq but for the values it chose itself (see blindKey).
func (cp *carryPlan) sameBut(seq uint64, params json.RawMessage) bool {
	if cp == nil {
		return false
	}
	want, ok := cp.blind[seq]
	return ok && blindKey(params, cp.sources[seq]) == want
}

// tailSites are the carried values in an answer's tail (see answerTail)
// made from recorded host frame seq.
func (cp *carryPlan) tailSites(seq uint64, tail []byte) []hostSite {
	keys := map[string]bool{}
	for _, s := range cp.host[seq] {
		keys[s.key] = true
	}
	if len(keys) == 0 {
		return nil
	}
	const pre = `,"result":`
	if !bytes.HasPrefix(tail, []byte(pre)) || !json.Valid(tail[len(pre):len(tail)-1]) {
		return nil
	}
	var sites []hostSite
	walkLeaves(tail, len(pre), []string{"result"}, false, func(_ []string, s, e int) {
		if k, _, ok := valueKey(tail[s:e]); ok && keys[k] {
			sites = append(sites, hostSite{s, e, k})
		}
	})
	return sites
}

// carryState is what one replay learned: the live value of each carried
// value, by key.
type carryState struct {
	learned map[string][]byte
}

// learnFrom learns the live values of the recorded plugin frame seq from
// raw, the live frame that stands for it (liveSeq in the timeline).
func (r *runner) learnFrom(seq uint64, raw []byte, liveSeq uint64) {
	sites := r.plan.carry.sources[seq]
	if len(sites) == 0 {
		return
	}
	body := bytes.TrimSuffix(raw, []byte("\r"))
	if !json.Valid(body) {
		return
	}
	want := map[string]*carrySite{}
	for i := range sites {
		want[sites[i].path] = &sites[i]
	}
	var said map[string]struct{} // the frame's tokens, once one is asked of
	leaves(body, func(path []string, s, e int) {
		site := want[strings.Join(path, pathSep)]
		if site == nil {
			return
		}
		tok := body[s:e]
		if r.carry.learned == nil {
			r.carry.learned = map[string][]byte{}
		}
		// The same value, or one the plugin still says elsewhere in the
		// frame (a name in a list it ordered otherwise): not one it chose
		// anew, so nothing is carried.
		if string(tok) == site.token {
			delete(r.carry.learned, site.key)
			return
		}
		if said == nil {
			said = tokensOf(body)
		}
		if _, ok := said[site.token]; ok {
			delete(r.carry.learned, site.key)
			return
		}
		r.carry.learned[site.key] = bytes.Clone(tok)
		r.res.Carried = append(r.res.Carried, Carried{Place: site.place, Recorded: site.token, Live: string(tok), LiveSeq: liveSeq, Path: slices.Clone(path)})
	})
}

// tokensOf is the set of the tokens of body, valid JSON: its strings,
// member names among them, as written, and its numbers and literals. A
// carried value the plugin still says elsewhere in a frame is one of them:
// the frame is read once for all its values, where each was looked for in
// the whole frame (an answer listing 40,000 values the plugin chose anew
// took 25 s), and a number is no longer found inside another number or a
// string.
func tokensOf(body []byte) map[string]struct{} {
	out := map[string]struct{}{}
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case jsonscan.IsSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',':
			i++
		case c == '"':
			end, _ := jsonscan.SkipString(body, i)
			out[string(body[i:end])] = struct{}{}
			i = end
		default:
			end := i + 1
			for end < len(body) && !jsonscan.IsSpace(body[end]) && strings.IndexByte("{}[]:,\"", body[end]) < 0 {
				end++
			}
			out[string(body[i:end])] = struct{}{}
			i = end
		}
	}
	return out
}

// learn learns from a live reply or notification of cause (the
// have[cause]-th), the frame just handled.
func (r *runner) learn(cause string, raw []byte, liveSeq uint64) {
	seqs := r.plan.carry.occ[cause]
	if n := r.have[cause]; n >= 1 && n <= len(seqs) && seqs[n-1] != 0 {
		r.learnFrom(seqs[n-1], raw, liveSeq)
	}
}

// rewrite is raw with the live value put in place of each carried one at
// sites; raw itself when none was learned or none differs.
func (r *runner) rewrite(raw []byte, sites []hostSite) []byte {
	if len(sites) == 0 || len(r.carry.learned) == 0 {
		return raw
	}
	var out []byte
	last := 0
	for _, s := range sites {
		live, ok := r.carry.learned[s.key]
		if !ok || s.end > len(raw) || bytes.Equal(raw[s.start:s.end], live) {
			continue
		}
		out = append(append(out, raw[last:s.start]...), live...)
		last = s.end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

// Uncarry returns live (a replay's timeline) with each value carried
// (Result.Carried) put back to its recorded value in what the plugin said,
// for comparing with the recording: the live value stands for the recorded
// one, as a live id does. A value of at least MinCarried bytes is put back
// wherever the plugin says it; a shorter one only where it was learned. It
// returns live itself when nothing changes, else a copy in which only the
// frames that changed have new bytes; live is never changed.
func Uncarry(live []frame.Frame, carried []Carried) []frame.Frame {
	if len(carried) == 0 {
		return live
	}
	back := map[string]string{} // live token → recorded, anywhere
	type at struct {
		seq  uint64
		path string
	}
	here := map[at]string{} // where a short value was learned
	for _, c := range carried {
		if _, long, ok := valueKey([]byte(c.Live)); ok && long {
			back[c.Live] = c.Recorded
		}
		here[at{c.LiveSeq, strings.Join(c.Path, pathSep)}] = c.Recorded
	}
	var out []frame.Frame
	for i := range live {
		f := &live[i]
		if f.IsEvent() || f.Dir != frame.Out || f.Cut != nil {
			continue
		}
		body, cr := f.Raw, false
		if bytes.HasSuffix(body, []byte("\r")) {
			body, cr = body[:len(body)-1], true
		}
		if !json.Valid(body) {
			continue
		}
		var nb []byte
		last := 0
		leaves(body, func(path []string, s, e int) {
			tok := string(body[s:e])
			rec, ok := back[tok]
			if !ok {
				if rec, ok = here[at{f.Seq, strings.Join(path, pathSep)}]; !ok || tok == rec {
					return
				}
			}
			nb = append(append(nb, body[last:s]...), rec...)
			last = e
		})
		if nb == nil {
			continue
		}
		nb = append(nb, body[last:]...)
		if cr {
			nb = append(nb, '\r')
		}
		out = rewrite(out, live, i, nb)
	}
	if out == nil {
		return live
	}
	return out
}

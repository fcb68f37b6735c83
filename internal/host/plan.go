package host

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/canon"
	"github.com/tapedeck/tapedeck/message"
)

// stepKind is what the host does at one step of a replay.
type stepKind uint8

const (
	sendFrame  stepKind = iota + 1 // write a recorded host frame
	sendAnswer                     // answer a plugin request, with its live id
	closeStdin                     // the host closed the plugin's stdin
	sendSignal                     // the host signalled the plugin
)

// step is one host action, in recorded order. Its fields are ordered so
// that a step takes 64 bytes: a plan holds one per host frame.
type step struct {
	frame *frame.Frame // the recorded frame (sendFrame, sendAnswer) or event
	// causes are the plugin frames that came between the previous step and
	// this one in the recording, by identity (see CauseOf). A step waits
	// until the live plugin has produced every cause of every step up to
	// and including it, so the plugin reads its input in the order it did
	// in the recording, whatever it waits on in between. A recording's
	// steps share one backing array of causes.
	causes []string
	call   *call // sendAnswer: the call answered
	// script is a host script's wait before this step; nil for none.
	script *scriptWait
	// took and tookFromStart are how long the recording shows the plugin
	// took to say what this step waits for: it bounds the wait (see
	// Options.WaitFactor, and tookOf). They are not a took, so that a
	// step packs into 64 bytes: a plan holds one a host frame.
	took          time.Duration
	signal        int32
	kind          stepKind
	tookFromStart bool
}

// scriptWait is a host script's wait before a step: this long before
// sending, and this much silence first.
type scriptWait struct{ pause, quiet time.Duration }

// newScriptWait is the wait of a step, nil when it has none.
func newScriptWait(pause, quiet time.Duration) *scriptWait {
	if pause == 0 && quiet == 0 {
		return nil
	}
	return &scriptWait{pause, quiet}
}

// pause is how long a host script waits before sending st.
func (st *step) pause() time.Duration {
	if st.script == nil {
		return 0
	}
	return st.script.pause
}

// quiet is how much silence a host script waits for before sending st.
func (st *step) quiet() time.Duration {
	if st.script == nil {
		return 0
	}
	return st.script.quiet
}

// tookOf is the recorded wait of st.
func (st *step) tookOf() took { return took{d: st.took, fromStart: st.tookFromStart} }

// took is the recorded wait of a step: the time from the previous host
// step to the last frame the step waits for (the last of its causes or,
// for an answer, its request). A wait that includes the plugin's start
// (the plugin had said no frame before) is counted from the plugin's first
// line on stdout instead: how long a program takes to start says more
// about the machine than about the plugin.
type took struct {
	d         time.Duration
	fromStart bool // counted from the plugin's first line on stdout
}

// call is a request the plugin made in the recording, with the host's
// recorded answer.
type call struct {
	method string
	params string       // the params' key, for matching (see paramsKey)
	seq    uint64       // the recorded request's seq
	at     int64        // the recorded request's time
	occ    int          // the recorded request is occurrence occ of its cause
	answer *frame.Frame // nil: the host never answered it
	tail   []byte       // of the answer made from it (see answerTail)
	used   bool         // a live request was matched to it
	// lost is set once a wait gave up on its request: its answer's step
	// does not wait for it again.
	lost   bool
	liveID json.RawMessage
	unkept bool // the live request was past what the recording explains
	// late is set once its answer step has been given up on: the answer is
	// then sent as soon as the request comes.
	late  bool
	sent  bool  // its answer was sent
	index int32 // in plan.all
	// gaveUp says how the wait for its request ran to its bound ("":
	// it did not).
	gaveUp string
}

// plan is what a recording asks of a replay.
type plan struct {
	steps []step
	calls map[string][]*call // by method, in recorded order
	all   []*call            // every call, by index (see fresh)
	// sameParams indexes calls by method and params key (method, NUL,
	// key): the places in calls[method] of those with these params, in
	// order. skip, sameFrom and idFrom are how far a replay found calls
	// used (see match): of a method, a place for each of its calls at or
	// before its first unused call from there on (see unusedAt); of an
	// index entry; of the calls a script answers by id. A replay's own,
	// started over by fresh.
	sameParams map[string][]int32
	skip       map[string][]int32
	sameFrom   map[string]int
	idFrom     map[string]int
	// lastAnswer is lastAnswered's, by method: a replay's own, as the
	// calls are (see fresh).
	lastAnswer map[string]*call
	// tail are the causes after the last step: what the plugin said after
	// the host's last frame, awaited before the replay ends; tailTook is
	// how long that took in the recording.
	tail     []string
	tailTook took
	// timed is set when the recording has times: its waits are bounded by
	// them (a host script's are not).
	timed bool
	// A host script's plan also has answers matched by the live request's
	// id, and results for requests that no answer takes.
	script   bool
	byID     map[string][]*call
	fallback map[string]json.RawMessage
	// out and err bound what the live timeline keeps of the plugin's
	// stdout and stderr (see bound).
	out, err bound
	// expect are the recorded plugin's lines on stdout, in order, with
	// their causes: a live line with the same bytes as the next ones has
	// the same cause, without parsing it again (see runner.causeOf).
	expect []expected
	// frames is the recording's length, which the live timeline is made
	// to (it grows past it only when the plugin says more), and answers
	// the number of its host frames and answers, the size of Result.Sent.
	frames, answers int
	// carry is what the recording carries back (nil: nothing; see
	// carry.go); chatter is Reading.Chatter.
	carry   *carryPlan
	chatter func(method string) bool
	// moved are Reading.Moved, as the plan finds them.
	moved []movedPath
}

// Reading is what a plan is told of the plugin's messages beyond what the
// recording shows: what the host profile knows of its protocol, and the
// rules of tapedeck.json.
type Reading struct {
	// Carry names places of the plugin's messages that hold values the
	// plugin chooses itself, beside those the plan finds (see carry.go):
	// method is the message's (a response's, that of the request it
	// answers), path the value's concrete segments ("params",
	// "registrations", "[0]", "id"). Nil names none.
	Carry func(method string, path []string) bool
	// Moved are the paths of folders the recording gave the plugin that a
	// replay may give it others for (a copy of its data folder for each
	// run): the plan finds where the host frames say them, and each run
	// puts its own there (Options.Moved; see moved.go).
	Moved []string
	// Chatter reports whether the plugin's messages of method are reports
	// on its own work whose number and place depend on timing (progress,
	// log lines): a replay does not wait for them, answers such a request
	// of the plugin whenever it comes, and one more than recorded with the
	// recorded answer of the same method. Nil: none is.
	Chatter func(method string) bool
}

// isChatter reports whether the plugin's messages of method are chatter.
func (p *plan) isChatter(method string) bool { return p.chatter != nil && p.chatter(method) }

// expected is a recorded line of the plugin's stdout, classified.
type expected struct {
	frame *frame.Frame // the recorded line
	cause string
	// params is a request's params key (see paramsKey): a live request
	// with the same bytes has the same, without reading them again.
	params  string
	ok      bool // it has a cause
	request bool // it is a request: a live one is parsed, to be answered
}

// needsParse reports whether the plan needs recorded frame f parsed: a
// line of the plugin's stdout, or a host line that may be a reply.
func needsParse(f *frame.Frame) bool {
	switch {
	case f.IsEvent() || f.Dir == frame.Err:
		return false
	case f.Dir == frame.In:
		return mayHaveID(f.Raw) // else a host frame of the host's own
	}
	return true
}

// parseFrom is the size of a recording whose lines are parsed on every
// core (see parseAll).
const parseFrom = 4096

// parsed is what the plan keeps of one recorded line while it is made:
// its kind and cause (interned: one string per cause, not per frame), a
// reply's id key, and the whole message only for a request, whose params
// pair it with a call. It is dropped once the plan is made.
type parsed struct {
	cause string
	id    string           // a reply's id (message.IDKey)
	req   *message.Message // a request
	kind  message.Kind
	ok    bool // it has a cause
}

// parseAll reads the recorded frames the plan needs (needsParse), on
// every core when there are many: reading them is most of making a plan,
// and it happens while the plugin starts. A line's envelope is read
// without copies (message.ReadEnvelope); only a request is parsed whole.
func parseAll(recorded []frame.Frame) []parsed {
	out := make([]parsed, len(recorded))
	parse := func(lo, hi int) {
		causes := map[string]string{} // interned, this worker's
		var key []byte
		for i := lo; i < hi; i++ {
			f := &recorded[i]
			if !needsParse(f) {
				continue
			}
			e := message.ReadEnvelope(f.Raw)
			p := &out[i]
			p.kind = e.Kind
			switch e.Kind {
			case message.Request:
				m := message.Parse(f.Raw)
				p.req = &m
				key = append(append(key[:0], "call "...), e.Method...)
			case message.Notification:
				key = append(append(key[:0], "call "...), e.Method...)
			case message.Response, message.ErrorReply:
				p.id = message.IDKey(e.ID)
				key = append(append(key[:0], "reply "...), p.id...)
			default:
				continue
			}
			c, ok := causes[string(key)]
			if !ok {
				c = string(key)
				causes[c] = c
			}
			p.cause, p.ok = c, true
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(recorded)/parseFrom)
	if workers < 2 {
		parse(0, len(recorded))
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(recorded) + workers - 1) / workers
	for lo := 0; lo < len(recorded); lo += chunk {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parse(lo, min(lo+chunk, len(recorded)))
		}()
	}
	wg.Wait()
	return out
}

// mayHaveID reports whether raw may hold an "id" member: without the
// bytes "id" in quotes, or an escape that could spell them, it cannot.
func mayHaveID(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"id"`)) || bytes.IndexByte(raw, '\\') >= 0
}

// CauseOf is how replay identifies a plugin frame across runs: a reply by
// the id of the host request it answers ("reply " + id), a request or a
// notification by its method ("call " + method), counted by occurrence.
// Frames of other kinds (stray output, blank lines) cause nothing: the host
// ignores them. ok is false for those.
func CauseOf(m *message.Message) (cause string, ok bool) {
	switch m.Kind {
	case message.Request, message.Notification:
		return "call " + m.Method, true
	case message.Response, message.ErrorReply:
		return "reply " + m.IDKey(), true
	}
	return "", false
}

// makePlan reads the recording: host frames that are not answers become
// steps, each with the plugin frames that preceded it as its causes; the
// plugin's requests, paired with the host's answers by id, become calls
// whose answers are steps too, sent once the live plugin has made the
// request. Pairing does not trust order: a host that pipes its input can
// have an answer on the plugin's stdin before the plugin has even asked.
func makePlan(recorded []frame.Frame, rd Reading) *plan {
	p := &plan{calls: map[string][]*call{}, sameParams: map[string][]int32{}, out: boundOf(recorded, frame.Out), err: boundOf(recorded, frame.Err), frames: len(recorded), chatter: rd.Chatter}
	replies := map[string][]*frame.Frame{} // host answers by id, in order
	type req struct {
		c  *call
		id string
	}
	var reqs []req
	msgs := parseAll(recorded)
	nOut := 0
	for i := range recorded {
		if f := &recorded[i]; f.Dir == frame.Out && !f.IsEvent() {
			nOut++
		}
	}
	p.expect = make([]expected, 0, nOut)
	occ := map[string]int{} // frames of each cause so far
	firstAt := int64(-1)    // the plugin's first line on stdout
	nCauses, nSteps := 0, 0 // the plugin's frames with a cause, the host's frames and events
	for i := range recorded {
		f := &recorded[i]
		if f.At != 0 {
			p.timed = true
		}
		if firstAt < 0 && f.Dir == frame.Out && !f.IsEvent() {
			firstAt = f.At
		}
		if f.IsEvent() || f.Dir == frame.In {
			nSteps++
		}
		if !needsParse(f) {
			continue
		}
		m := &msgs[i]
		if f.Dir == frame.Out {
			if m.ok {
				occ[m.cause]++
				nCauses++
			}
			if f.Cut == nil {
				p.expect = append(p.expect, expected{frame: f, cause: m.cause, ok: m.ok, request: m.kind == message.Request})
			}
		}
		switch {
		case f.Dir == frame.Out && m.kind == message.Request:
			c := p.addCall(call{method: m.req.Method, params: paramsKey(m.req.Params), seq: f.Seq, at: f.At, occ: occ[m.cause]})
			if f.Cut == nil {
				p.expect[len(p.expect)-1].params = c.params
			}
			k := sameKey(c.method, c.params)
			p.sameParams[k] = append(p.sameParams[k], int32(len(p.calls[c.method])))
			p.calls[c.method] = append(p.calls[c.method], c)
			reqs = append(reqs, req{c, m.req.IDKey()})
		case f.Dir == frame.In && m.kind.IsReply():
			replies[m.id] = append(replies[m.id], f)
		}
	}
	answered := map[*frame.Frame]*call{}
	for _, r := range reqs {
		if q := replies[r.id]; len(q) > 0 {
			r.c.answer, replies[r.id] = q[0], q[1:]
			answered[q[0]] = r.c
		}
	}

	// The causes of all steps, in order, in one array made to size: each
	// step's are a piece of it (pending: the causes since the last step).
	arena := make([]string, 0, nCauses)
	pending := arena
	p.steps = make([]step, 0, nSteps)
	// The recorded wait of a step runs from the previous step (prevAt) to
	// the last frame it waits for (lastAt, -1: none).
	var prevAt int64
	lastAt := int64(-1)
	spoke := false // the plugin said a frame before the steps so far
	tookFor := func(lastAt int64) took {
		t := took{fromStart: !spoke}
		from := prevAt
		if t.fromStart {
			from = firstAt
		}
		if lastAt > from {
			t.d = time.Duration(lastAt - from)
		}
		return t
	}
	add := func(s step) {
		if s.kind == sendAnswer && s.call.at > lastAt {
			lastAt = s.call.at
		}
		t := tookFor(lastAt)
		s.took, s.tookFromStart = t.d, t.fromStart
		if s.kind == sendFrame || s.kind == sendAnswer {
			p.answers++
		}
		if len(pending) > 0 {
			spoke = true
		}
		s.causes = pending[:len(pending):len(pending)]
		arena = arena[:len(arena)+len(pending)]
		pending = arena[len(arena):]
		prevAt, lastAt = s.frame.At, -1
		p.steps = append(p.steps, s)
	}
	for i := range recorded {
		f := &recorded[i]
		switch {
		case f.Event == frame.EventEOF:
			add(step{kind: closeStdin, frame: f})
		case f.Event == frame.EventSignal:
			if n := frame.SignalNumber(f.Signal()); n > 0 {
				add(step{kind: sendSignal, frame: f, signal: int32(n)})
			}
		case f.IsEvent():
		case f.Dir == frame.Out:
			if m := &msgs[i]; m.ok && !(rd.Chatter != nil && (m.kind == message.Request || m.kind == message.Notification) && rd.Chatter(strings.TrimPrefix(m.cause, "call "))) {
				pending = append(pending, m.cause) // within arena's capacity
				lastAt = f.At
			}
		case f.Dir == frame.In:
			if c, ok := answered[f]; ok {
				add(step{kind: sendAnswer, frame: f, call: c})
				continue
			}
			if msgs[i].kind.IsReply() {
				continue // an answer to nothing the plugin asked: never sent
			}
			add(step{kind: sendFrame, frame: f})
		}
	}
	p.tail, p.tailTook = pending[:len(pending):len(pending)], tookFor(lastAt)
	p.moved = movedPaths(rd.Moved)
	p.carry = planMoved(planCarry(recorded, msgs, rd), recorded, p.moved)
	p.readAnswers()
	return p
}

// addCall makes c one of p's calls.
func (p *plan) addCall(c call) *call {
	c.index = int32(len(p.all))
	n := &c
	p.all = append(p.all, n)
	return n
}

// fresh is p for one more replay: what a replay marks on its calls
// (matched, sent, given up on) starts over, on copies; the rest is shared.
func (p *plan) fresh() *plan {
	q := *p
	calls := make([]call, len(p.all))
	q.all = make([]*call, len(p.all))
	for i, c := range p.all {
		calls[i] = *c
		q.all[i] = &calls[i]
	}
	remap := func(m map[string][]*call) map[string][]*call {
		if m == nil {
			return nil
		}
		out := make(map[string][]*call, len(m))
		for k, cs := range m {
			ds := make([]*call, len(cs))
			for i, c := range cs {
				ds[i] = q.all[c.index]
			}
			out[k] = ds
		}
		return out
	}
	q.calls, q.byID = remap(p.calls), remap(p.byID)
	q.skip, q.sameFrom, q.idFrom, q.lastAnswer = nil, nil, nil, nil
	q.steps = slices.Clone(p.steps)
	for i := range q.steps {
		if c := q.steps[i].call; c != nil {
			q.steps[i].call = q.all[c.index]
		}
	}
	return &q
}

// paramsKey is what params are matched by: their canonical spelling
// (package canon, by which diff also compares frames), "" for none, and
// the bytes as they are when they are not JSON.
func paramsKey(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var buf [256]byte
	if k, ok := canon.Append(buf[:0], raw); ok {
		return string(k)
	}
	return string(raw)
}

// matchLook is how many unused calls of the method after the first a
// live request that is no recorded line byte for byte is compared with
// for params that differ only in the values the plugin chose itself (see
// carryPlan.sameBut): a plugin's requests come about in their recorded
// order, and each comparison reads the params anew.
const matchLook = 256

// match takes the recorded call that answers a live request: a script's
// answer for its id, else the first unused call of that method with equal
// params (or, for a request that is no recorded line, params equal but for
// the values the plugin chose itself, among the first matchLook unused),
// else the first unused one. differs reports that the params did not
// match. known, when set, is the recorded line the live request is byte
// for byte, whose params key it has. Each looks past the calls found used
// once (skip, sameFrom, idFrom): a plugin that makes 160,000 requests of
// one method is answered in time in step with them, where each took a look
// at every one before it (37% of the replay's time, and the requests past
// 54,000 were given up on, answered later than they were waited for); and
// the look for params equal but for chosen values reads unused calls
// only, where it read every used one between (a plugin that skipped one
// early request and chose other ids: 80,000 requests 12.3 s, 40,000 3.4 s).
func (p *plan) match(id json.RawMessage, method string, params json.RawMessage, known *expected) (c *call, differs bool) {
	if c := p.unusedByID(message.IDKey(id)); c != nil {
		c.used, c.method = true, method
		return c, false
	}
	cs := p.calls[method]
	first := p.unusedAt(method, 0)
	if first == len(cs) {
		return nil, false
	}
	if p.script {
		cs[first].used = true
		return cs[first], false
	}
	var want string
	if known != nil {
		want = known.params // the same bytes as a recorded request's
	} else {
		want = paramsKey(params)
	}
	found := p.unusedSame(method, want)
	if known == nil && p.carry != nil {
		end := len(cs)
		if found >= 0 {
			end = found
		}
		for i, looked := first, 0; i < end && looked < matchLook; i, looked = p.unusedAt(method, i+1), looked+1 {
			if p.carry.sameBut(cs[i].seq, params) {
				found = i
				break
			}
		}
	}
	if found >= 0 {
		cs[found].used = true
		return cs[found], false
	}
	cs[first].used = true
	return cs[first], true
}

// unusedByID is the first unused answer a host script gives the live
// request id key, nil for none.
func (p *plan) unusedByID(key string) *call {
	cs := p.byID[key]
	if len(cs) == 0 {
		return nil
	}
	i := p.idFrom[key]
	for i < len(cs) && cs[i].used {
		i++
	}
	if p.idFrom == nil {
		p.idFrom = map[string]int{}
	}
	p.idFrom[key] = i
	if i == len(cs) {
		return nil
	}
	return cs[i]
}

// sameKey is what sameParams indexes the calls of method with params key
// params by.
func sameKey(method, params string) string { return method + "\x00" + params }

// unusedAt is the place in calls[method] of its first unused call at or
// after place i, len(calls[method]) when there is none. skip[method] holds,
// for each place, a place at or before the first unused call from it on
// (a call once used stays used, so the hint stays true): a look follows
// the hints over the calls found used before, and points each place it
// passed at what it found, so that calls used are passed over once each,
// not once for each look.
func (p *plan) unusedAt(method string, i int) int {
	cs := p.calls[method]
	if i >= len(cs) {
		return len(cs)
	}
	if p.skip == nil {
		p.skip = map[string][]int32{}
	}
	hint := p.skip[method]
	if hint == nil {
		hint = make([]int32, len(cs))
		for j := range hint {
			hint[j] = int32(j)
		}
		p.skip[method] = hint
	}
	at := i
	for at < len(cs) && cs[at].used {
		at = max(int(hint[at]), at+1)
	}
	for j := i; j < at; {
		next := max(int(hint[j]), j+1)
		hint[j] = int32(at)
		j = next
	}
	return at
}

// unusedSame is the place in calls[method] of its first unused call with
// params key params, -1 when there is none.
func (p *plan) unusedSame(method, params string) int {
	k := sameKey(method, params)
	at, cs := p.sameParams[k], p.calls[method]
	if len(at) == 0 {
		return -1
	}
	j := p.sameFrom[k]
	for j < len(at) && cs[at[j]].used {
		j++
	}
	if p.sameFrom == nil {
		p.sameFrom = map[string]int{}
	}
	p.sameFrom[k] = j
	if j == len(at) {
		return -1
	}
	return int(at[j])
}

// answerWith is the host's answer to a live request, with the live id, in
// the host's compact member order: tail is the recorded answer's (see
// answerTail).
func answerWith(tail []byte, liveID json.RawMessage) []byte {
	const head = `{"jsonrpc":"2.0","id":`
	b := make([]byte, 0, len(head)+len(liveID)+len(tail))
	return append(append(append(b, head...), liveID...), tail...)
}

// answerTail is what follows the id in the answer made from a recorded
// one: its error, else its result (null when it has none), and the brace.
func answerTail(recorded *frame.Frame) []byte {
	var obj map[string]json.RawMessage
	json.Unmarshal(bytes.TrimSuffix(recorded.Raw, []byte("\r")), &obj)
	var b bytes.Buffer
	if e, ok := obj["error"]; ok && string(e) != "null" {
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		b.WriteString(`,"result":`)
		if r, ok := obj["result"]; ok {
			b.Write(r)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// readAnswers makes each answered call's answer tail, once for every
// replay of the plan.
func (p *plan) readAnswers() {
	for _, c := range p.all {
		if c.answer != nil {
			c.tail = answerTail(c.answer)
			if p.carry != nil {
				sites := p.carry.tailSites(c.answer.Seq, c.tail)
				if len(p.moved) > 0 {
					sites = mergeSites(sites, movedSites(c.tail, p.moved))
				}
				if sites != nil {
					if p.carry.tails == nil {
						p.carry.tails = map[int32][]hostSite{}
					}
					p.carry.tails[c.index] = sites
				}
			}
		}
	}
}

// unmatchedAnswer is the error a live request gets when the recording has
// nothing to answer it with.
func unmatchedAnswer(method string, liveID json.RawMessage) []byte {
	msg, _ := json.Marshal("tapedeck replay: the recording has no answer for " + method)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(liveID)
	b.WriteString(`,"error":{"code":-32601,"message":`)
	b.Write(msg)
	b.WriteString(`}}`)
	return b.Bytes()
}

// lastAnswered is the last recorded call of method that the host
// answered, nil when none was. It is looked for once a method (answers
// are the recording's): chatter the plugin says more of than recorded
// asks for it at each request, and each looked back over the calls the
// host never answered (a recording of 80,000 such requests with one
// answered: 22 s).
func (p *plan) lastAnswered(method string) *call {
	if c, ok := p.lastAnswer[method]; ok {
		return c
	}
	var last *call
	cs := p.calls[method]
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].answer != nil {
			last = cs[i]
			break
		}
	}
	if p.lastAnswer == nil {
		p.lastAnswer = map[string]*call{}
	}
	p.lastAnswer[method] = last
	return last
}

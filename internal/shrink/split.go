// Package shrink owns finding a smaller session that still fails the same
// way: it cuts a recording into host steps that can go without breaking
// the tape (the handshake and the closing messages its caller names, stdin
// close and signals stay; an answer goes with the request it answers; what the plugin said
// goes with the step that caused it, or is pooled over the steps the host
// wrote ahead of it), and runs delta debugging (ddmin)
// over those steps with a test it is given, in parallel, bounded in runs.
// It also parses the predicates that say what "fails the same way" means
// beyond the default. Split and Minimize take frames and a test function;
// the driver (Run) is what shrink runs: it replays each candidate with the
// playback use case, chases the first difference (or a predicate, or an
// --exec command) and writes the smallest failing tape.
package shrink

import (
	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/message"
)

// Lifecycle names the host's messages that open and end a session (the
// host profile's Opening and Closing); nil takes none.
type Lifecycle struct {
	Opening, Closing func(method string) bool
}

// Tape is a recording cut into host steps.
type Tape struct {
	frames []frame.Frame
	// owner is, per frame, the unit it goes with; -1 for frames that stay
	// whatever is removed (what the plugin said before the first host
	// step, its closing and exit events). from is, per frame, the first
	// unit it may go with: below owner for a frame pooled over a run of
	// steps the host wrote ahead of the plugin, which stays while any of
	// them does.
	// Both are int32, as steps is: a million-frame recording's split
	// costs 4 bytes a frame less for each.
	owner, from []int32
	units       []Unit
	steps       []int32 // the units that may go, in order
	pooled      map[uint64]bool
	// runReads is how many runs of units Split read to count the steps
	// that may go in them: one per frame whose from is below its owner
	// (a test bounds it).
	runReads int
}

// Unit is one host step and what goes with it.
type Unit struct {
	Seq    uint64 // the host frame's (or event's) seq
	What   string // its method, or the event ("eof", "signal")
	Fixed  bool   // part of the handshake or of the ending: never removed
	Frames int    // how many frames go with it
}

// Split cuts recorded into units: each host frame that is not an answer,
// and each stdin close or signal, starts a unit; the plugin's frames go
// with the unit they followed, except a reply, which goes with the host
// request it answers; a host answer goes with the plugin request it
// answers. The units of the handshake (host messages whose method
// lc.Opening takes) and the trailing units that end the session (those
// lc.Closing takes, stdin close, signals) are fixed.
//
// When the host wrote ahead of the plugin (several host steps with
// nothing from the plugin between them, as when all host lines are piped
// at once), what the plugin said after them may have been caused by any
// of them: when that run holds two steps or more that may go, those
// frames (but replies, which go by id) are pooled over the run and stay
// while any unit of the run does (see Pooled).
func Split(recorded []frame.Frame, lc Lifecycle) *Tape {
	t := assign(recorded, lc)
	t.pool()
	return t
}

// assign is Split before its runs are pooled (see pool): each frame's
// owner and the first unit of the run it came in.
func assign(recorded []frame.Frame, lc Lifecycle) *Tape {
	t := &Tape{frames: recorded, owner: make([]int32, len(recorded)), from: make([]int32, len(recorded)), pooled: map[uint64]bool{}}
	hostFrames := 0
	for i := range recorded {
		if f := &recorded[i]; f.Dir == frame.In || f.IsEvent() {
			hostFrames++
		}
	}
	t.units = make([]Unit, 0, hostFrames) // at most a unit a host frame or event
	names := map[string]string{}          // each method's name once, however many units it starts
	var cur int32 = -1
	type owners struct{ owner, from int32 }
	hostReqs := map[string][]int32{}    // host request id → units, in order
	pluginReqs := map[string][]owners{} // plugin request id → owners, in order
	var answers []int                   // host answers, settled once every request is known
	curAt := make([]int32, len(recorded))
	var block []int32 // per unit: the first unit of the run the host wrote ahead in
	heard := false    // the plugin said something since the current unit started
	start := func(f *frame.Frame, what string) {
		t.units = append(t.units, Unit{Seq: f.Seq, What: what})
		b := int32(len(t.units) - 1)
		if cur >= 0 && !heard {
			b = block[cur]
		}
		block = append(block, b)
		cur, heard = int32(len(t.units)-1), false
	}
	withCur := func(i int) {
		t.owner[i], t.from[i] = cur, cur
		if cur >= 0 {
			t.from[i] = block[cur]
		}
	}
	for i := range recorded {
		f := &recorded[i]
		curAt[i] = cur
		switch {
		case f.Event == frame.EventEOF || f.Event == frame.EventSignal:
			start(f, f.Event.String())
			t.owner[i], t.from[i] = cur, cur
			continue
		case f.IsEvent():
			t.owner[i], t.from[i] = -1, -1
			continue
		case f.Dir == frame.Err:
			withCur(i)
			heard = true
			continue
		}
		m := message.ReadEnvelope(f.Raw) // its kind, method and id, without copies
		switch {
		case f.Dir == frame.In && m.Kind.IsReply():
			answers = append(answers, i)
		case f.Dir == frame.In:
			what, ok := names[string(m.Method)]
			if !ok {
				what = string(m.Method)
				names[what] = what
			}
			if what == "" {
				what = m.Kind.String()
			}
			start(f, what)
			t.owner[i], t.from[i] = cur, cur
			if m.Kind == message.Request {
				hostReqs[message.IDKey(m.ID)] = append(hostReqs[message.IDKey(m.ID)], cur)
			}
		case m.Kind.IsReply():
			heard = true
			t.owner[i], t.from[i] = cur, cur
			if q := hostReqs[message.IDKey(m.ID)]; len(q) > 0 {
				t.owner[i], t.from[i], hostReqs[message.IDKey(m.ID)] = q[0], q[0], q[1:]
			}
		default:
			heard = true
			withCur(i)
			if m.Kind == message.Request {
				pluginReqs[message.IDKey(m.ID)] = append(pluginReqs[message.IDKey(m.ID)], owners{t.owner[i], t.from[i]})
			}
		}
	}
	for _, i := range answers {
		m := message.ReadEnvelope(recorded[i].Raw)
		t.owner[i], t.from[i] = curAt[i], curAt[i]
		if q := pluginReqs[message.IDKey(m.ID)]; len(q) > 0 {
			t.owner[i], t.from[i], pluginReqs[message.IDKey(m.ID)] = q[0].owner, q[0].from, q[1:]
		}
	}
	for i := range t.units {
		if lc.Opening != nil && lc.Opening(t.units[i].What) {
			t.units[i].Fixed = true
		}
	}
	for i := len(t.units) - 1; i >= 0; i-- {
		switch w := t.units[i].What; {
		case w == frame.EventEOF.String(), w == frame.EventSignal.String(), lc.Closing != nil && lc.Closing(w):
			t.units[i].Fixed = true
			continue
		}
		break
	}
	for _, o := range t.owner {
		if o >= 0 {
			t.units[o].Frames++
		}
	}
	for i, u := range t.units {
		if !u.Fixed {
			t.steps = append(t.steps, int32(i))
		}
	}
	return t
}

// pool settles the frames that came after a run of host steps: a run
// with fewer than two steps that may go pools nothing, and what followed
// goes with its last unit, as without a run; the rest are pooled.
func (t *Tape) pool() {
	// removable[u] is
	// how many units before unit u may go, so that a run's count is one
	// subtraction, not a walk over the run for each frame that follows it.
	removable := make([]int32, len(t.units)+1)
	for u := range t.units {
		removable[u+1] = removable[u]
		if !t.units[u].Fixed {
			removable[u+1]++
		}
	}
	for i := range t.from {
		if t.from[i] == t.owner[i] {
			continue
		}
		t.runReads++
		if removable[t.owner[i]+1]-removable[t.from[i]] < 2 {
			t.from[i] = t.owner[i]
			continue
		}
		t.pooled[t.frames[i].Seq] = true
	}
}

// Pooled reports whether the frame of recorded seq went with a run of
// host steps the host wrote ahead of the plugin rather than with one step:
// it may have been caused by any of them, so a candidate that keeps some
// of them may rightly not say it (the caller compares it only when the
// live plugin says it).
func (t *Tape) Pooled(seq uint64) bool { return t.pooled[seq] }

// Units lists every unit in recorded order.
func (t *Tape) Units() []Unit { return t.units }

// Steps is how many units may be removed; Keep and the ddmin work on their
// indexes 0 … Steps()-1.
func (t *Tape) Steps() int { return len(t.steps) }

// Step is the unit of removable step i.
func (t *Tape) Step(i int) Unit { return t.units[t.steps[i]] }

// Keep returns the recording with only the removable steps keep (indexes
// into 0 … Steps()-1) and every fixed unit: the frames in recorded order,
// with their recorded seq and times. The slice shares the frames' bytes.
func (t *Tape) Keep(keep []int) []frame.Frame {
	out, _ := t.keep(keep)
	return out
}

// keep is Keep, and also says how many runs of units it read to decide
// whether a pooled frame stays (one per such frame: a test bounds it).
func (t *Tape) keep(keep []int) (out []frame.Frame, runReads int) {
	kept := make([]bool, len(t.units))
	for i, u := range t.units {
		kept[i] = u.Fixed
	}
	for _, s := range keep {
		kept[t.steps[s]] = true
	}
	// before[u] is how many units before unit u are kept, so that whether
	// a pooled frame's run keeps one is a subtraction, not a walk over
	// the run for each frame that follows it.
	before := make([]int32, len(t.units)+1)
	for u, k := range kept {
		before[u+1] = before[u]
		if k {
			before[u+1]++
		}
	}
	// Which frames stay is settled first, so that the candidate is made
	// to its size at once: a shrink makes one per replay, and a slice
	// grown by doubling would cost up to twice the recording each time.
	stays := make([]bool, len(t.owner))
	n := 0
	for i, o := range t.owner {
		keep := o < 0 || kept[o]
		if f := t.from[i]; !keep && f >= 0 && f < o {
			runReads++
			keep = before[o] > before[f]
		}
		if keep {
			stays[i] = true
			n++
		}
	}
	out = make([]frame.Frame, 0, n)
	for i, keep := range stays {
		if keep {
			out = append(out, t.frames[i])
		}
	}
	return out, runReads
}

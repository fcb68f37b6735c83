// Package note owns the notes of a replay or a comparison: what tapedeck
// says that the recording does not (a wait given up, a request answered
// from a recorded call whose params differed, a variable not applied). A
// note is a value, made where it is found (the engine that plays the
// host, the playback use case): its kind and what it names (a host step,
// a frame's seq, a method), so that whoever prints notes (package
// present) tells the ones alike by those, never by reading the words
// back. String words a note; it is the one place that does.
package note

import (
	"fmt"
	"strings"
)

// Kind says what a note is about, and so which of its fields it uses.
type Kind uint8

const (
	// Said is a note whose words are all there is to it: Text.
	Said Kind = iota
	// Answered: the plugin's request Method, the replay's frame Seq, was
	// answered from a recorded call whose params differed.
	Answered
	// AnsweredUnkept: the plugin's request Method, past what the
	// recording can explain (not kept, so without a seq), was answered
	// from a recorded call whose params differed.
	AnsweredUnkept
	// Exited: the plugin exited before Step; the rest was not sent.
	Exited
	// GaveUp: Step was sent once a wait for what the plugin had said
	// before it gave up; Text says how the wait ended and what was
	// missing.
	GaveUp
	// Late: the plugin made its request Method, recorded at Seq, later
	// than recorded; it was answered then.
	Late
	// Unasked: the plugin never made its request Method, recorded at
	// Seq, that the host answered at Answer; the answer was not sent.
	// Text, when set, says how the wait for it ran to its bound.
	Unasked
	// ScriptLate: the plugin made the request Method that the script's
	// Step answers later than expected; it was answered then.
	ScriptLate
	// ScriptUnasked: the plugin never made a request that the script's
	// Step answers; the answer was not sent.
	ScriptUnasked
	// Unused: the folder the run gave the plugin in the variable Text, for
	// a fresh start, was not used: nothing in it was opened, made or
	// changed. A replay that passes says it too (a pass that may mean
	// nothing).
	Unused
)

// Step names a host step: a recorded host frame, or a line of a host
// script.
type Step struct {
	Seq    uint64
	Script bool // Seq is a script line
}

// String is "host frame seq N" or "script line N".
func (s Step) String() string {
	if s.Script {
		return fmt.Sprintf("script line %d", s.Seq)
	}
	return fmt.Sprintf("host frame seq %d", s.Seq)
}

// Note is one thing tapedeck says of a replay or a comparison. Its Kind
// says which fields it uses; the others are zero. A Note is comparable.
type Note struct {
	Kind   Kind
	Text   string // Said: the note; GaveUp: how the wait ended
	Method string // the plugin's request it is about
	Step   Step   // the host step it is about
	// Seq is the request's frame: in the replay (Answered) or in the
	// recording (Late, Unasked); Answer is the host frame that answered it
	// in the recording (Unasked).
	Seq, Answer uint64
}

// Text is a note that its words say whole.
func Text(s string) Note { return Note{Kind: Said, Text: s} }

// Textf is Text(fmt.Sprintf(format, args...)).
func Textf(format string, args ...any) Note { return Text(fmt.Sprintf(format, args...)) }

// String words the note, as tapedeck prints it after "note: ".
func (n Note) String() string {
	switch n.Kind {
	case Answered:
		return fmt.Sprintf("%s (replay seq %d) %s", n.Method, n.Seq, AnsweredWhat)
	case AnsweredUnkept:
		return fmt.Sprintf("%s (not kept: past what the recording can explain) %s", n.Method, AnsweredWhat)
	case Exited:
		return fmt.Sprintf("the plugin exited before %s; the rest was not sent", n.Step)
	case GaveUp:
		return fmt.Sprintf("%s sent %s", n.Step, n.Text)
	case Late:
		return fmt.Sprintf("the plugin made its %s request (recorded seq %d) later than recorded; it was answered then", n.Method, n.Seq)
	case Unasked:
		if n.Text != "" {
			return fmt.Sprintf("the plugin never made the %s request (recorded seq %d) that the host answered at seq %d; the answer was not sent (the wait for the request was given up %s)", n.Method, n.Seq, n.Answer, n.Text)
		}
		return fmt.Sprintf("the plugin never made the %s request (recorded seq %d) that the host answered at seq %d; the answer was not sent", n.Method, n.Seq, n.Answer)
	case ScriptLate:
		return fmt.Sprintf("the plugin made the %s request that %s answers later than expected; it was answered then", n.Method, n.Step)
	case ScriptUnasked:
		return fmt.Sprintf("the plugin never made a request that %s answers; the answer was not sent", n.Step)
	case Unused:
		return fmt.Sprintf("the plugin did not use the folder this run gave it in %s for a fresh start (it opened, made and changed nothing in it): it may keep its state elsewhere (a default folder, when it finds no settings there), which this run then read and wrote for real, so a pass says little; name the variable it reads its folder from, or carry a copy of the folder beside the tape (tapedeck play --fresh-dir %s, then Keep it)", n.Text, n.Text)
	}
	return n.Text
}

// AnsweredWhat is what became of the requests of Answered notes, as a
// sentence about several says it ("3 requests answered from …").
const AnsweredWhat = "answered from a recorded call whose params differed"

// Like is what notes alike share: the note with the frames it names left
// out (its seqs, its step's line), so that notes that say the same of
// other frames are said once.
func (n Note) Like() Note {
	n.Seq, n.Answer, n.Step.Seq = 0, 0, 0
	return n
}

// Strings words each note.
func Strings(notes []Note) []string {
	if notes == nil {
		return nil
	}
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.String()
	}
	return out
}

// Join words the notes, sep between them.
func Join(notes []Note, sep string) string { return strings.Join(Strings(notes), sep) }

package playground

// Why a kept session's replay says something else: the differences read
// for what they are about (the clock, random numbers, files, the
// environment), each said in words with what to do.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/playback"
)

// What a changed value holds when the clock made it: an ISO or clock
// time, a relative time, a time in milliseconds since 1970.
var (
	clockWords = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\b\d\d?:\d\d(:\d\d)?\b|\b(this|last) (minute|hour|second)|\b(a|an|one|\d+) (second|minute|hour|day)s? ago\b|\bjust now\b|\b1[5-9]\d{11}\b`)
	// randomWords: a token of hex or base-36 digits of 6 or more, or a
	// UUID.
	randomWords = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-z]*\d[0-9a-z]*[a-z][0-9a-z]*\b|\b[0-9a-z]*[a-z][0-9a-z]*\d[0-9a-z]*\b`)
	// fileWords: what a plugin says of a file that is not as it expects.
	fileWords = regexp.MustCompile(`EEXIST|ENOENT|EACCES|ENOTDIR|EISDIR|File exists|No such file|Permission denied|FileExistsError|FileNotFoundError`)
)

// explain says why the replay res of a kept session (its header meta)
// differs from it, each reason one paragraph with what to do; tapes is the
// tapes folder as the person names it.
func explain(res *playback.TapeResult, meta *frame.Session, tapes string) []string {
	o := res.Outcome
	if o == nil {
		return nil
	}
	if o.Err != nil {
		return []string{"Its replay could not run (" + o.Err.Error() + "): fix what it says, and keep it again."}
	}
	sus := readDifferences(o)
	var why []string
	if w := clockReason(sus, meta.Clock, tapes); w != "" {
		why = append(why, w)
	}
	if w := filesReason(o, sus.files); w != "" {
		why = append(why, w)
	}
	why = append(why, environmentReasons(o)...)
	if len(why) == 0 {
		why = append(why, "It said something else when the same session was played to it again: it depends on something the session does not hold (timing, the network, files outside its folders). The differences above say where; tapedeck replay --runs 3 on the tape shows what changes from run to run and proposes the ignore rules and filters for "+tapes+"/tapedeck.json.")
	}
	return why
}

// suspects are what the differences of a replay point to.
type suspects struct {
	clock  bool // a time the clock made changed
	random bool // a token drawn at random changed
	files  bool // the plugin says a file was not as it expected
}

// readDifferences is what the differences of o point to.
func readDifferences(o *playback.Outcome) suspects {
	var sus suspects
	for _, d := range o.Diff.Differences {
		if d.Live != nil && fileWords.MatchString(d.Live.Raw) {
			sus.files = true
		}
		if len(d.Changes) == 0 {
			// A frame said on one side only: what it holds of the clock
			// or of chance may be why (a request the plugin no longer
			// made, as its answer came elsewhere).
			if d.Recorded != nil {
				sus.oneSide(d.Recorded.Raw)
			}
			if d.Live != nil {
				sus.oneSide(d.Live.Raw)
			}
		}
		for _, c := range d.Changes {
			sus.change(c.Old, c.New)
		}
	}
	return sus
}

// oneSide notes what a frame said on one side only holds of the clock or
// of chance.
func (sus *suspects) oneSide(raw string) {
	sus.clock = sus.clock || clockWords.MatchString(raw)
	sus.random = sus.random || drawnToken(raw)
}

// change notes what a value that changed from old to new points to: a
// time, then (the times left out) a token drawn at random, or a file.
func (sus *suspects) change(old, new string) {
	sus.files = sus.files || fileWords.MatchString(new)
	if clockWords.MatchString(old) || clockWords.MatchString(new) {
		sus.clock = true
		old, new = clockWords.ReplaceAllString(old, ""), clockWords.ReplaceAllString(new, "")
	}
	if old != new && !sus.random && differsInTokens(old, new) {
		sus.random = true
	}
}

// clockReason says why times or drawn tokens differ, as the session's
// clock (nil: the real one) explains it; "" when none do.
func clockReason(sus suspects, clock *frame.Clock, tapes string) string {
	pinned := clock != nil && !clock.Missed
	switch {
	case (sus.clock || sus.random) && clock == nil:
		return "Clock and randomness: the session ran on the real clock, with random numbers nobody seeded (play --pin-clock=false), and what the plugin says depends on them (a time, a relative time, a random name): a replay says other ones. Keep it with the clock pinned, as play does by default (leave out --pin-clock=false)."
	case (sus.clock || sus.random) && clock.Missed:
		return "Clock and randomness: the plugin never loaded the pinned clock (only Node and Python plugins are pinned, and a launcher that sets its own NODE_OPTIONS or PYTHONPATH drops the pin), and what it says depends on the time or on random numbers. Leave those values out of the comparison: tapedeck replay --runs 3 on the tape proposes the ignore rules and filters for " + tapes + "/tapedeck.json."
	case sus.clock && pinned:
		return "Clock: the session's clock was pinned, yet the times the plugin says differ: it takes them from something the pin does not reach (a child process: keep the session with play's processes pinned, record --pin-children; a file's time; the network). Leave them out of the comparison: tapedeck replay --runs 3 on the tape proposes filters for " + tapes + "/tapedeck.json."
	case sus.random && pinned:
		return "Randomness: the session's random numbers were seeded, yet names or ids the plugin draws differ: it draws them where the seed does not reach (a child process, a generator of its own, the system's random device read directly). Leave them out of the comparison: tapedeck replay --runs 3 on the tape proposes filters for " + tapes + "/tapedeck.json."
	}
	return ""
}

// filesReason says why files differ, when the differences (changed), the
// notes or the plugin's stderr say they do; "" when none do.
func filesReason(o *playback.Outcome, changed bool) string {
	var unused []string
	for _, n := range o.Notes {
		if n.Kind == note.Unused {
			unused = append(unused, n.Text)
		}
	}
	if len(unused) == 0 && !changed && !filesSaid(o) {
		return ""
	}
	w := "Files: the plugin read or wrote files that a replay does not give each run a copy of, as they were when the session started (a file the session wrote was there already, or one it read was gone)."
	if len(unused) > 0 {
		w += fmt.Sprintf(" It did not use the folder given it in %s: it keeps its state elsewhere.", strings.Join(unused, ", "))
	}
	return w + " Keep its state in its data folder (Agentty's dataDir, AGENTTY_PLUGIN_DATA), or name the variable it reads its folder from: tapedeck play --fresh-dir NAME, then keep the session again."
}

// environmentReasons say how the plugin's surroundings differ from the
// session's: its drift, and the variables it ran without.
func environmentReasons(o *playback.Outcome) []string {
	var why []string
	if o.Drift != nil && !o.Drift.None() {
		why = append(why, "Environment: the plugin's surroundings changed since the session ("+o.Drift.Summary+"). Keep the session again where it is replayed, or set what differs (tapedeck replay --env NAME=VALUE).")
	}
	for _, n := range o.Notes {
		if n.Kind == note.Said && strings.Contains(n.Text, "ran without the recorded") {
			why = append(why, "Environment: "+n.Text+".")
		}
	}
	return why
}

// differsInTokens reports whether old and new differ in a token drawn at
// random (hex or base-36 digits mixed with letters, a UUID).
func differsInTokens(old, new string) bool {
	a, b := randomWords.FindAllString(old, -1), randomWords.FindAllString(new, -1)
	if len(a) != len(b) {
		return len(a)+len(b) > 0
	}
	for i := range a {
		if a[i] != b[i] && len(a[i]) >= 6 && len(b[i]) >= 6 {
			return true
		}
	}
	return false
}

// drawnToken reports whether s holds a token that looks drawn at random: eight
// or more hex or base-36 digits, letters and digits mixed.
func drawnToken(s string) bool {
	for _, w := range randomWords.FindAllString(s, -1) {
		if len(w) >= 8 {
			return true
		}
	}
	return false
}

// filesSaid reports whether the plugin's stderr in the replay says a file
// was not as it expected.
func filesSaid(o *playback.Outcome) bool {
	for _, f := range o.Live() {
		if f.Dir == frame.Err && fileWords.Match(f.Raw) {
			return true
		}
	}
	return false
}

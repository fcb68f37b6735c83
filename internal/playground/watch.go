package playground

// Watching the plugin's files: on a change, the plugin starts again and
// the actions so far are played to it again, by causes; then what it said
// is compared with what it said before.

import (
	"fmt"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/playback"
)

// replaying is a replay of the actions of an earlier run.
type replaying struct {
	steps  []step // the host's frames to send again, with their causes
	tail   []cause
	before []frame.Frame // the earlier run's frames, as the host saw them
	why    string        // what changed
	// partial: the earlier run ran past the page's window (bounded.go),
	// so its actions and frames are those of the window only.
	partial bool
	// from is what the earlier run started from: the run that plays its
	// actions again starts from it too (startdata.go), so that it is the
	// session the person clicked, and what it says differently is the
	// change's, not the state the earlier run left.
	from startCopy
}

// userSteps are the steps a replay of actions sends: the host's frames
// but its answers (the host answers the plugin again, as it does) and a
// last shutdown (the playground restarts to play them).
func userSteps(list []step) []step {
	var out []step
	var carry []cause
	for _, st := range list {
		if st.answer {
			carry = append(carry, st.causes...)
			continue
		}
		st.causes = append(carry, st.causes...)
		carry = nil
		out = append(out, st)
	}
	if n := len(out); n > 0 && strings.Contains(string(out[n-1].raw), `"method":"shutdown"`) {
		out = out[:n-1]
	}
	return out
}

// replayActions plays run r's actions: each step once the plugin has said
// what it had said before it in the earlier run (or StepTimeout has
// passed), then waits for what it said after the last, and tells the
// pages how what the plugin said compares with before.
func (s *server) replayActions(r *run) {
	a := r.replayed
	need := map[string]int{}
	var late []string
	for _, st := range a.steps {
		for _, c := range st.causes {
			need[c.key]++
		}
		if !s.awaitCauses(r, need) {
			late = append(late, fmt.Sprintf("frame %s of before was sent without all of what the plugin had said before it", shortFrame(st.raw)))
		}
		s.mu.Lock()
		if r.over {
			s.mu.Unlock()
			return
		}
		s.sendLocked(r, st.raw)
		s.mu.Unlock()
	}
	for _, c := range a.tail {
		need[c.key]++
	}
	s.awaitCauses(r, need)
	s.mu.Lock()
	defer s.mu.Unlock()
	r.boot.replayed = time.Now()
	if a.partial || len(r.keep.said) > 0 {
		late = append(late, "a run said more than the playground keeps for the page: the actions played again, and the frames compared, are those it kept")
	}
	after := append([]frame.Frame(nil), r.frames...)
	res := struct {
		T    string `json:"t"`
		Run  int    `json:"run"`
		Why  string `json:"why"`
		Same bool   `json:"same"`
		Text string `json:"text"`
	}{T: "watch", Run: r.n, Why: a.why}
	o, err := playback.Compare(&playback.Recording{Name: "before", Meta: &frame.Session{}, Frames: a.before},
		&playback.Recording{Name: "after", Meta: &frame.Session{}, Frames: after},
		&playback.CompareOptions{Names: [2]string{"before", "after"}})
	if err != nil {
		res.Text = "could not compare: " + err.Error()
	} else {
		var b strings.Builder
		present.Outcome(&b, o)
		for _, l := range late {
			b.WriteString("note: " + l + "\n")
		}
		res.Same, res.Text = o.Same() && len(late) == 0, b.String()
	}
	s.sayWatched(a.why, res.Same, o, err, late)
	b, _ := jsonMarshal(res)
	s.watched = b
	s.broadcastLocked(res)
}

// sayWatched tells the terminal how what the plugin said after the change
// why compares with before: the diff as tapedeck diff prints it (in
// colour on a terminal), and the notes.
func (s *server) sayWatched(why string, same bool, o *playback.Outcome, err error, late []string) {
	w := s.opt.Log
	names := escape.Text(why)
	switch {
	case err != nil:
		fmt.Fprintf(w, "tapedeck: play: after %s: could not compare: %v\n", names, err)
		return
	case same:
		fmt.Fprintf(w, "tapedeck: play: after %s: the plugin said the same again\n", names)
		return
	}
	fmt.Fprintf(w, "tapedeck: play: after %s: the plugin said something else:\n", names)
	present.Outcome(w, o)
	for _, l := range late {
		fmt.Fprintf(w, "note: %s\n", l)
	}
}

// awaitCauses waits until run r's plugin has said need, for at most
// StepTimeout; false when it gave up (or the plugin exited).
func (s *server) awaitCauses(r *run, need map[string]int) bool {
	deadline := time.NewTimer(s.opt.StepTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		met := true
		for k, n := range need {
			if r.have[k] < n {
				met = false
				break
			}
		}
		over := r.over
		s.mu.Unlock()
		if met {
			return true
		}
		if over {
			return false
		}
		select {
		case <-r.said:
		case <-r.done:
		case <-deadline.C:
			return false
		}
	}
}

func shortFrame(raw []byte) string {
	s := string(raw)
	if len(s) > 80 {
		s = s[:79] + "…"
	}
	return s
}

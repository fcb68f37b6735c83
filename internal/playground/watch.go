package playground

// Watching the plugin's files: on a change, the plugin starts again and
// the actions so far are played to it again, by causes; then what it said
// is compared with what it said before.

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/playback"
)

// replaying is a replay of the actions of an earlier run.
type replaying struct {
	steps  []step // the host's frames to send again, with their causes
	tail   []cause
	before []frame.Frame // the earlier run's frames, as the host saw them
	why    string        // what changed
}

// fileStamp is what a file's change is seen by.
type fileStamp struct {
	size int64
	mod  time.Time
}

// files stamps the plugin's files: not the tapes folder, hidden folders
// or node_modules.
func (s *server) files() map[string]fileStamp {
	out := map[string]fileStamp{}
	root := s.plugin.Dir
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || path == s.tapes) {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			rel, _ := filepath.Rel(root, path)
			out[rel] = fileStamp{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	return out
}

// changes says what differs between two stamps of the files.
func changes(a, b map[string]fileStamp) string {
	var what []string
	for p, st := range b {
		if old, ok := a[p]; !ok {
			what = append(what, p+" added")
		} else if old != st {
			what = append(what, p+" changed")
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			what = append(what, p+" removed")
		}
	}
	sort.Strings(what)
	return strings.Join(what, ", ")
}

// watch looks at the plugin's files every WatchEvery until the
// playground ends; a change that has settled (the same at two looks)
// starts the plugin again with the actions so far.
func (s *server) watch() {
	seen := s.files()
	tick := time.NewTicker(s.opt.WatchEvery)
	defer tick.Stop()
	var pending map[string]fileStamp
	for {
		select {
		case <-s.quitCh:
			return
		case <-tick.C:
		}
		now := s.files()
		switch {
		case changes(seen, now) == "":
			pending = nil
			continue
		case pending == nil || changes(pending, now) != "":
			pending = now // still being written: look again
			continue
		}
		why := changes(seen, now)
		seen, pending = now, nil
		fmt.Fprintf(s.opt.Log, "tapedeck: play: %s: starting the plugin again and playing the actions so far\n", why)
		s.mu.Lock()
		prev := s.cur
		list, tail := steps(prev.frames)
		actions := &replaying{steps: userSteps(list), tail: tail, before: append([]frame.Frame(nil), prev.frames...), why: why}
		s.mu.Unlock()
		if err := s.restart(actions); err != nil {
			return
		}
	}
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
	b, _ := jsonMarshal(res)
	s.watched = b
	s.broadcastLocked(res)
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

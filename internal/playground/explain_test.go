package playground

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	cmp "github.com/tapedeck/tapedeck/internal/diff"
	"github.com/tapedeck/tapedeck/internal/fingerprint"
	"github.com/tapedeck/tapedeck/internal/host"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/playback"
)

// TestExplain: why a kept session's replay differs is read from what
// differs, and said with what to do.
func TestExplain(t *testing.T) {
	t.Parallel()
	changed := func(old, new string) cmp.Difference {
		return cmp.Difference{Kind: cmp.Changed, Method: "ui/setPanel", Changes: []cmp.Change{{Path: "params.x", Old: old, New: new}}}
	}
	pinned := &frame.Clock{Origin: time.Unix(1, 0), Seed: 7}
	missed := &frame.Clock{Origin: time.Unix(1, 0), Missed: true}
	for _, c := range []struct {
		name  string
		clock *frame.Clock
		o     playback.Outcome
		want  []string // the start of each reason, in order
	}{
		{"an ISO time on the real clock", nil, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"created 2026-12-06T06:28:35.234Z"`, `"created 2026-12-06T06:29:01.101Z"`)}}},
			[]string{"Clock and randomness: the session ran on the real clock"}},
		{"a relative time", nil, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"saved this minute"`, `"saved 3 minutes ago"`)}}},
			[]string{"Clock and randomness: the session ran on the real clock"}},
		{"a random name on the real clock", nil, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"note-48617234.md"`, `"note-73cb1a47.md"`)}}},
			[]string{"Clock and randomness: the session ran on the real clock"}},
		{"a request missing that held a time", nil, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{{Kind: cmp.Missing, Recorded: &cmp.Side{Raw: `{"method":"prompt/inject","params":{"text":"created 2026-12-06T06:45:08.459Z"}}`}}}}},
			[]string{"Clock and randomness: the session ran on the real clock"}},
		{"a plugin the pin missed", missed, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"at 10:01:02"`, `"at 10:04:05"`)}}},
			[]string{"Clock and randomness: the plugin never loaded the pinned clock"}},
		{"a time the pin does not reach", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"at 10:01:02"`, `"at 10:04:05"`)}}},
			[]string{"Clock: the session's clock was pinned, yet the times"}},
		{"a name the seed does not reach", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"id 9f8e7d6c5b"`, `"id 0a1b2c3d4e"`)}}},
			[]string{"Randomness: the session's random numbers were seeded"}},
		{"a file that was there", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"saved"`, `"could not save: EEXIST"`)}}},
			[]string{"Files: the plugin read or wrote files"}},
		{"a file said on stderr", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`1`, `2`)}},
			Run: &host.Result{Live: []frame.Frame{{Dir: frame.Err, Raw: []byte("Error: ENOENT: no such file or directory, open 'x'")}}}},
			[]string{"Files: the plugin read or wrote files"}},
		{"a folder left unused", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`1`, `2`)}}, Notes: []note.Note{{Kind: note.Unused, Text: "COSMICA_HOME"}}},
			[]string{"Files: the plugin read or wrote files"}},
		{"surroundings that changed", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`1`, `2`)}}, Drift: &fingerprint.Drift{Summary: "node 20.1.0 → 22.3.0", Changes: []string{"node 20.1.0 → 22.3.0"}}},
			[]string{"Environment: the plugin's surroundings changed since the session (node 20.1.0 → 22.3.0)"}},
		{"time and files", nil, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`"saved at 10:01"`, `"could not save: EEXIST"`)}}},
			[]string{"Clock and randomness", "Files"}},
		{"nothing to tell", pinned, playback.Outcome{Diff: cmp.Result{Differences: []cmp.Difference{changed(`1`, `2`)}}},
			[]string{"It said something else when the same session was played to it again"}},
		{"no run", pinned, playback.Outcome{Err: errors.New("node: command not found")},
			[]string{"Its replay could not run (node: command not found)"}},
	} {
		o := c.o
		got := explain(&playback.TapeResult{Outcome: &o}, &frame.Session{Clock: c.clock}, "tapes")
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], c.want[i])
		}
		if !ok {
			t.Errorf("%s: explain =\n%s\nwant reasons starting %q", c.name, strings.Join(got, "\n"), c.want)
		}
	}
}

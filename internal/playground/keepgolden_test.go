package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/datafolder"
	"github.com/tapedeck/tapedeck/internal/note"
	"github.com/tapedeck/tapedeck/internal/waittest"
	"github.com/tapedeck/tapedeck/playback"
)

// copyFixture copies a fixture plugin that runs on the vendored SDK of
// clock-node (../clock-node/sdk) into a folder of the test's, with that
// SDK beside it; it returns the plugin's folder.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := copyPlugin(t, name)
	sdk := filepath.Join("..", "..", "testdata", "plugins", "clock-node", "sdk")
	to := filepath.Join(filepath.Dir(dir), "clock-node", "sdk")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(sdk)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(sdk, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// says waits for the plugin's stdout to say text in run (0: any run).
func (s *stream) says(t *testing.T, text string) {
	t.Helper()
	said := func(f map[string]any) bool {
		raw, _ := f["r"].(string)
		return f["d"] == "out" && strings.Contains(raw, text)
	}
	// The stream opens with a reset holding every frame so far: a plugin
	// quicker than the test (the race detector slows the test more) has
	// said it there.
	if s.wait(30*time.Second, func(ev map[string]any) bool {
		if ev["t"] == "reset" {
			frames, _ := ev["frames"].([]any)
			for _, f := range frames {
				if f, ok := f.(map[string]any); ok && said(f) {
					return true
				}
			}
			return false
		}
		f, _ := ev["f"].(map[string]any)
		return ev["t"] == "frame" && said(f)
	}) == nil {
		t.Fatalf("the plugin never said %q", text)
	}
}

// keepCase is a session of a fixture plugin clicked through the page's
// API: each action, and what the plugin says once it has done it.
type keepCase struct {
	plugin string
	fresh  []string // play --fresh-dir
	// home fills the folder the fresh variable names before play starts
	// (COSMICA_HOME's settings and an older note).
	home    func(t *testing.T, dir string)
	actions [][2]string
}

func cosmicaHome(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"notes":"notes"}`), 0o644)
	// A note of 90 s ago: "saved 1 minute ago" in the session and in every
	// replay of it, with the clock pinned.
	at := time.Now().Add(-90 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	os.WriteFile(filepath.Join(dir, "notes", "note-00000001.md"), []byte("# older\ncreated "+at+"\n"), 0o644)
}

var keepCases = []keepCase{{
	plugin: "cosmica-node",
	fresh:  []string{"COSMICA_HOME"},
	home:   cosmicaHome,
	actions: [][2]string{
		{`{"do":"ui","element":"title","event":"change","value":"groceries"}`, ""},
		{`{"do":"ui","element":"new","event":"click"}`, `Cosmica: 2 notes`},
		{`{"do":"ui","element":"new","event":"click"}`, `Cosmica: 3 notes`},
		{`{"do":"ui","element":"tick","event":"click"}`, `saved 1 minute ago`},
	},
}, {
	plugin: "xfeed-node",
	actions: [][2]string{
		{`{"do":"ui","element":"post","event":"click"}`, `2 posts`},
		{`{"do":"ui","element":"feed","event":"action","item":"first","action":"like"}`, `1 likes`},
		{`{"do":"ui","element":"post","event":"click"}`, `3 posts`},
	},
}, {
	plugin: "gallery-node",
	actions: [][2]string{
		{`{"do":"ui","element":"tabs","event":"change","value":"data"}`, `"type":"table"`},
		{`{"do":"ui","element":"table","event":"select","item":"b"}`, `"selected":"b"`},
		{`{"do":"ui","element":"tabs","event":"change","value":"recipes"}`, `"type":"select"`},
		{`{"do":"ui","element":"recipe","event":"change","value":"ramen"}`, `"value":"ramen"`},
		{`{"do":"ui","element":"save","event":"click"}`, `saved ramen at`},
		{`{"do":"ui","element":"veg","event":"change","value":true}`, `"value":true`},
		{`{"do":"ui","element":"recipe","event":"change","value":"dal"}`, `"value":"dal"`},
		{`{"do":"ui","element":"save","event":"click"}`, `saved dal at`},
	},
}}

// TestKeptGoldensPass: a session of a plugin that says the time and
// random names, keeps state in its data folder or in a home folder a
// variable names, is kept by Keep it with the clock pinned (play's
// default) and what it started from beside the tape: Keep's own replay
// passes, and so do 20 replays of the tape at once, each in folders of
// its own; the real home folder is never written.
func TestKeptGoldensPass(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, c := range keepCases {
		t.Run(c.plugin, func(t *testing.T) {
			dir := copyFixture(t, c.plugin)
			home := t.TempDir() // HOME: Cosmica falls back to ~/CosmicaNotes
			env := append(os.Environ(), "HOME="+home)
			var real string
			if c.home != nil {
				real = t.TempDir()
				c.home(t, real)
				env = append(env, c.fresh[0]+"="+real)
			}
			p := play(t, dir, func(o *Options) { o.Env, o.PinClock, o.FreshDirs = env, true, c.fresh })
			ev := p.follow(t)
			ev.says(t, "ui/setPanel")
			for _, a := range c.actions {
				if status, res := p.post(t, a[0]); status != 200 {
					t.Fatalf("%s: %d %v", a[0], status, res)
				}
				if a[1] != "" {
					ev.says(t, a[1])
				}
			}
			status, res := p.post(t, `{"do":"keep","name":"golden"}`)
			if status != 200 || res["same"] != true {
				t.Fatalf("keep: %d %v", status, res)
			}
			if !strings.Contains(p.log.String(), "tapedeck: play: kept session ") || !strings.Contains(p.log.String(), "its replay passes: tapedeck test tapes") {
				t.Errorf("the terminal does not say what was kept:\n%s", p.log)
			}
			tape := filepath.Join(dir, "tapes", "golden.jsonl")
			if _, start, err := datafolder.Read(tape); err != nil || start == nil || start.Data == "" || len(start.Env) != len(c.fresh) {
				t.Fatalf("the tape's data: %+v, %v", start, err)
			}
			// Under the race detector fewer, still side by side in this
			// process, for the detector.
			n := waittest.AtOnce(20)
			paths := make([]string, n)
			for i := range paths {
				paths[i] = tape
			}
			passed := 0
			var failed []string
			err := playback.Suite(context.Background(), paths, &playback.SuiteOptions{Replay: playback.Options{Env: env, StoreDir: p.store}, Jobs: n}, func(i int, r *playback.TapeResult) error {
				if r.Outcome != nil && r.Outcome.Same() {
					passed++
					if notes := note.Join(append(r.Outcome.Notes, r.Outcome.Run.Notes...), "\n"); notes != "" && i == 0 {
						t.Errorf("a replay of the kept tape says:\n%s", notes)
					}
				} else if len(failed) < 2 {
					b, _ := json.Marshal(r.Outcome.Diff)
					failed = append(failed, fmt.Sprintf("%v %s %v", r.Outcome.Err, b, r.Outcome.Notes))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d/%d replays at once passed", c.plugin, passed, n)
			if passed != n {
				t.Errorf("%d of %d replays at once passed: %s", passed, n, strings.Join(failed, "\n"))
			}
			if ents, _ := os.ReadDir(home); len(ents) != 0 {
				t.Errorf("the home folder was written: %v", ents)
			}
			if real != "" {
				if ents, _ := os.ReadDir(filepath.Join(real, "notes")); len(ents) != 1 {
					t.Errorf("the real %s was written: %v", c.fresh[0], ents)
				}
			}
		})
	}
}

// TestWatchKeepsWhatWasClicked: with --watch, a change to the plugin
// plays the actions so far again from what their run started from (not
// from the state that run left: the feed would hold the post twice, and
// the first post two likes), so the comparison shows the change (and the
// post's random id: each run draws its own), and Keep it then keeps the
// session clicked, with the plugin as it is now: its host frames are the
// clicks, it starts from the same data, and it passes.
func TestWatchKeepsWhatWasClicked(t *testing.T) {
	t.Parallel()
	needNode(t)
	dir := copyFixture(t, "xfeed-node")
	p := play(t, dir, func(o *Options) { o.Watch, o.WatchEvery, o.PinClock = true, 50*time.Millisecond, true })
	ev := p.follow(t)
	ev.says(t, "1 posts")
	for _, a := range [][2]string{
		{`{"do":"ui","element":"post","event":"click"}`, `2 posts`},
		{`{"do":"ui","element":"feed","event":"action","item":"first","action":"like"}`, `1 likes`},
	} {
		if status, res := p.post(t, a[0]); status != 200 {
			t.Fatalf("%s: %d %v", a[0], status, res)
		}
		ev.says(t, a[1])
	}
	main := filepath.Join(dir, "main.mjs")
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), `feed.posts.length + " posts"`, `feed.posts.length + " posts in the feed"`, 1)
	if changed == string(b) {
		t.Fatal("main.mjs has no title to change")
	}
	if err := os.WriteFile(main, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	w := ev.wait(30*time.Second, func(e map[string]any) bool { return e["t"] == "watch" })
	if w == nil {
		t.Fatalf("no comparison after the change:\n%s", p.log)
	}
	text, _ := w["text"].(string)
	if !strings.Contains(text, `"2 posts" → "2 posts in the feed"`) || strings.Contains(text, "3 posts") || strings.Contains(text, "2 likes") {
		t.Errorf("the comparison after the change is not the change alone:\n%s", text)
	}
	status, res := p.post(t, `{"do":"keep","name":"clicked"}`)
	if status != 200 || res["same"] != true {
		t.Fatalf("keep: %d %v", status, res)
	}
	_, frames := readTape(t, filepath.Join(dir, "tapes", "clicked.jsonl"))
	var events []string
	said := strings.Join(lines(frames, frame.Out), "\n")
	for _, h := range hostEvents(frames) {
		if strings.Contains(h, `"ui/event"`) {
			events = append(events, h)
		}
	}
	want := []string{
		uiEvent(`{"element":"post","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"feed","event":"action","item":"first","action":"like","context":` + ctxEN + `}`),
	}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("the kept session's clicks:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(said, "2 posts in the feed") || strings.Contains(said, "3 posts") {
		t.Errorf("the kept session is not the clicks with the plugin as it is now:\n%s", said)
	}
}

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/playback"
)

func init() {
	// steps is a fast plugin for the shrink tests: it answers initialize,
	// and each ui/event with a ui/notify naming the element, from a
	// goroutine, logging on stderr as it goes. "arm" arms it; "fire" then
	// sets the badge: "ok", or with FIXTURE_BUG "boom" when it was armed
	// (a failure that needs two steps).
	fixtures["steps"] = func() int {
		bug := os.Getenv("FIXTURE_BUG") != ""
		var mu sync.Mutex
		var wg sync.WaitGroup
		out := func(s string) { mu.Lock(); os.Stdout.WriteString(s + "\n"); mu.Unlock() }
		armed := false
		br := bufio.NewReader(os.Stdin)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				break
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Element string `json:"element"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "steps: %s %s\n", m.Method, m.Params.Element)
			switch m.Method {
			case "initialize":
				out(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
			case "ui/event":
				el := m.Params.Element
				badge := ""
				switch el {
				case "arm":
					armed = true
				case "fire":
					badge = "ok"
					if bug && armed {
						badge = "boom"
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					out(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"clicked ` + el + `","kind":"info"}}`)
					if badge != "" {
						out(`{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"` + badge + `"}}`)
					}
				}()
			case "shutdown":
				wg.Wait()
				fmt.Fprintln(os.Stderr, "steps: bye")
				return 0
			}
			wg.Wait()
		}
		return 0
	}
}

// stepsTape records the steps fixture through 40 host steps (arm is the
// 9th, fire the 33rd) and exports it; it returns the tape's path.
func stepsTape(t *testing.T) string {
	t.Helper()
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"steps","name":"Steps","version":"0.1.0"}}}` + "\n")
	for i := 1; i <= 40; i++ {
		el := "e" + strconv.Itoa(i)
		switch i {
		case 9:
			el = "arm"
		case 33:
			el = "fire"
		}
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"ui/event","params":{"element":%q,"event":"click","context":{}}}`+"\n", el)
	}
	in.WriteString(`{"jsonrpc":"2.0","method":"shutdown","params":{}}` + "\n")
	store := t.TempDir()
	if r := recordFixture(t, store, "steps", []byte(in.String())); r.code != 0 {
		t.Fatalf("record steps: exit %d: %s", r.code, r.stderr)
	}
	path := filepath.Join(t.TempDir(), "steps.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "last", "-o", path); r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	return path
}

// TestShrinkFindsTheTwoStepsAFailureNeeds: a session of 40 host steps
// whose failure needs 2 of them shrinks to those 2, plus initialize and the
// ending, in a bounded number of replays, and the tape written still fails
// the same way.
func TestShrinkFindsTheTwoStepsAFailureNeeds(t *testing.T) {
	t.Parallel()
	tp := stepsTape(t)
	out := filepath.Join(t.TempDir(), "min.jsonl")
	env := []string{"TAPEDECK_FIXTURE=steps", "FIXTURE_BUG=1"}
	r := tapedeck(t, t.TempDir(), nil, env, "shrink", tp, "-o", out, "-j", "1")
	if r.code != 0 {
		t.Fatalf("shrink: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%s", r.stderr)
	for _, want := range []string{
		"40 host steps (3 kept: initialize and the ending); chasing changed ui/setBadge at params.text (the first difference)",
		"2 of 40 host steps left after ",
		"kept: ui/event (seq ",
	} {
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("shrink's stderr lacks %q", want)
		}
	}
	m := regexp.MustCompile(`after (\d+) replays`).FindSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no replay count in %s", r.stderr)
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 60 {
		t.Errorf("%d replays to shrink 40 steps to 2: want at most 60", n)
	}
	src := readTapeOrFatal(t, out)
	var hostSaid []string
	for _, f := range src.Frames {
		if f.IsEvent() {
			if f.Event == frame.EventEOF {
				hostSaid = append(hostSaid, "eof")
			}
			continue
		}
		if f.Dir == frame.In {
			var msg struct {
				Method string
				Params struct{ Element string }
			}
			json.Unmarshal(f.Raw, &msg)
			hostSaid = append(hostSaid, strings.TrimSpace(msg.Method+" "+msg.Params.Element))
		}
	}
	if got, want := strings.Join(hostSaid, ", "), "initialize, ui/event arm, ui/event fire, shutdown, eof"; got != want {
		t.Errorf("the shrunk tape's host frames are %q, want %q", got, want)
	}
	if src.Meta.Tags["shrunk-from"] == "" || src.Meta.Frames.In != 4 {
		t.Errorf("shrunk header: tags %v, frames %+v", src.Meta.Tags, src.Meta.Frames)
	}
	// The minimal tape replays clean without the bug and fails with it.
	if r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=steps"}, "replay", out); r.code != 0 {
		t.Errorf("replay of the shrunk tape without the bug: exit %d\n%s", r.code, r.stdout)
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "replay", out); r.code != 1 || !strings.Contains(string(r.stdout), `params.text: "ok" → "boom"`) {
		t.Errorf("replay of the shrunk tape with the bug: exit %d\n%s", r.code, r.stdout)
	}
}

func readTapeOrFatal(t *testing.T, path string) *playback.Recording {
	t.Helper()
	src, err := playback.ReadTape(path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestShrinkPredicateAndExec: --predicate and --exec say what failing
// means; a tape that does not fail is refused with exit 1, a bad
// predicate with exit 2.
func TestShrinkPredicateAndExec(t *testing.T) {
	t.Parallel()
	tp := stepsTape(t)
	env := []string{"TAPEDECK_FIXTURE=steps", "FIXTURE_BUG=1"}
	out := filepath.Join(t.TempDir(), "min.jsonl")
	r := tapedeck(t, t.TempDir(), nil, env, "shrink", tp, "-o", out, "-j", "1", "--predicate", `changed("ui/setBadge:params.text") && exit == 0`)
	if r.code != 0 || !strings.Contains(string(r.stderr), "2 of 40 host steps left after ") {
		t.Errorf("--predicate: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("%s", r.stderr)
	// --exec: a candidate "fails" while it still holds the arm step.
	r = tapedeck(t, t.TempDir(), nil, env, "shrink", tp, "-o", out, "--exec", `grep -q '"element":"arm"' "$TAPE"`)
	if r.code != 0 || !strings.Contains(string(r.stderr), "1 of 40 host steps left after ") || !strings.Contains(string(r.stderr), "kept: ui/event (seq 10)") {
		t.Errorf("--exec: exit %d\n%s", r.code, r.stderr)
	}
	if r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=steps"}, "shrink", tp); r.code != 1 || !strings.Contains(string(r.stderr), "the replay shows no difference: nothing to shrink") {
		t.Errorf("a clean tape: exit %d\n%s", r.code, r.stderr)
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "shrink", tp, "--predicate", "changed(x)"); r.code != 2 || !strings.Contains(string(r.stderr), "want a quoted string") {
		t.Errorf("a bad predicate: exit %d\n%s", r.code, r.stderr)
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "shrink", tp, "-j", "1", "--max-runs", "3", "-o", out, "--", os.Args[0]); r.code != 0 || !strings.Contains(string(r.stderr), "stopped at --max-runs 3") {
		t.Errorf("--max-runs 3: exit %d\n%s", r.code, r.stderr)
	}
}

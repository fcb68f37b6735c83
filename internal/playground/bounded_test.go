package playground

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/race"
)

// TestThePageKeepsAWindow: a plugin that says more on stdout than the
// page's window holds, and then asks the host something: the page gets
// the first keptFrames of its stdout and a note that the rest was
// counted, not shown; the request past the window is still answered (the
// plugin's stderr, within its own window, shows the answer); the
// terminal says how much was not kept once the run has exited.
func TestThePageKeepsAWindow(t *testing.T) {
	// The window as the playground keeps it; under the race detector a
	// tenth of it (the same code; a flood of 20,500 lines took 38 s of CPU
	// there, 1.8 s without).
	kept, pageFrames := keptFrames, 0
	if race.Enabled {
		kept, pageFrames = keptFrames/10, keptFrames/10
	}
	plugin := `yes '{"jsonrpc":"2.0","method":"flood","params":{}}' | head -n ` + strconv.Itoa(kept+500) + `
echo '{"jsonrpc":"2.0","id":"late","method":"host/info","params":{}}'
while read -r line; do echo "got $line" >&2; done`
	p := play(t, t.TempDir(), func(o *Options) { o.Command, o.pageFrames = []string{"sh", "-c", plugin}, pageFrames })
	// A page that cannot keep up with the flood is let go, and starts
	// again from a reset: the test reads resets until one holds the answer.
	// The answer always comes: the bound is for a broken build, and long
	// (under the race detector at CI's load, 60 s was not enough).
	var reset map[string]any
	answered := func(ev map[string]any) bool {
		frames, _ := ev["frames"].([]any)
		for _, f := range frames {
			f := f.(map[string]any)
			if r, _ := f["r"].(string); f["d"] == "err" && strings.HasPrefix(r, `got {"jsonrpc":"2.0","id":"late","result":`) {
				return true
			}
		}
		return false
	}
	if !waitUntil(3*time.Minute, func() bool {
		reset = p.follow(t).wait(30*time.Second, func(ev map[string]any) bool { return ev["t"] == "reset" })
		return reset != nil && answered(reset)
	}) {
		t.Fatalf("the request past the window was not answered\n%s", p.log)
	}
	frames, _ := reset["frames"].([]any)
	out := 0
	for _, f := range frames {
		if f.(map[string]any)["d"] == "out" {
			out++
		}
	}
	if out != kept {
		t.Errorf("the page has %d of the plugin's stdout lines, want the window's %d", out, kept)
	}
	var notes []string
	findings, _ := reset["findings"].([]any)
	for _, f := range findings {
		if x := f.(map[string]any); x["rule"] == ruleNotKept {
			notes = append(notes, x["message"].(string))
		}
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "the plugin's stdout ran past what the playground keeps for the page ("+strconv.Itoa(kept)+" frames, ")
	}) {
		t.Errorf("the page has no note that stdout ran past its window: %q", notes)
	}
	p.end()
	if want := "run 1: not kept for the page: 501 lines ("; !strings.Contains(p.log.String(), want) {
		t.Errorf("the terminal does not say %q:\n%s", want, p.log)
	}
}

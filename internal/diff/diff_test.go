package diff

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
)

// timeline builds frames from lines prefixed "> " (host→plugin) or "< "
// (plugin→host) or "! " (stderr); "exit N" adds an exit event.
func timeline(lines ...string) []frame.Frame {
	var fs []frame.Frame
	for i, l := range lines {
		f := frame.Frame{Seq: uint64(i + 1), At: int64(i) * 1000}
		switch {
		case strings.HasPrefix(l, "> "):
			f.Dir, f.Raw = frame.In, []byte(l[2:])
		case strings.HasPrefix(l, "< "):
			f.Dir, f.Raw = frame.Out, []byte(l[2:])
		case strings.HasPrefix(l, "! "):
			f.Dir, f.Raw = frame.Err, []byte(l[2:])
		case strings.HasPrefix(l, "exit "):
			var code int
			fmt.Sscan(l[5:], &code)
			f.Event = frame.EventExit
			f.SetEnd("", &code)
		}
		fs = append(fs, f)
	}
	return fs
}

const (
	initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	initResp = `{"jsonrpc":"2.0","id":1,"result":{}}`
	panelA   = `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"Hello"}}}`
	panelB   = `{"jsonrpc":"2.0","id":1,"method":"ui/setPanel","params":{"tree":{"type":"text","text":"Howdy"}}}`
	notify   = `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"hi","kind":"info"}}`
	badge    = `{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"1"}}`
)

func kinds(r Result) string {
	var s []string
	for _, d := range r.Differences {
		s = append(s, string(d.Kind)+" "+d.What)
	}
	return strings.Join(s, "; ")
}

func TestFramesTellsDifferencesApart(t *testing.T) {
	rec := timeline("> "+initReq, "< "+initResp, "< "+panelA, "< "+notify, "< "+badge, "exit 0")
	cases := []struct {
		name string
		live []frame.Frame
		want string
	}{
		{"same", rec, ""},
		{"member order and spacing ignored", timeline("> "+initReq, `< {"result":{}, "id":1, "jsonrpc":"2.0"}`, "< "+panelA, "< "+notify, "< "+badge, "exit 0"), ""},
		{"plugin request ids normalised", timeline("> "+initReq, "< "+initResp, "< "+strings.Replace(panelA, `"id":1`, `"id":"x-9"`, 1), "< "+notify, "< "+badge, "exit 0"), ""},
		{"changed label", timeline("> "+initReq, "< "+initResp, "< "+panelB, "< "+notify, "< "+badge, "exit 0"), "changed request ui/setPanel"},
		{"dropped notification", timeline("> "+initReq, "< "+initResp, "< "+panelA, "< "+badge, "exit 0"), "missing notification ui/notify"},
		{"added frame", timeline("> "+initReq, "< "+initResp, "< "+panelA, "< "+notify, "< "+notify, "< "+badge, "exit 0"), "extra notification ui/notify"},
		{"swapped frames", timeline("> "+initReq, "< "+initResp, "< "+panelA, "< "+badge, "< "+notify, "exit 0"), "moved notification ui/notify"},
		{"crash", timeline("> "+initReq, "< "+initResp, "< "+panelA, "exit 3"), "missing notification ui/notify; missing notification ui/setBadge; exit exit: recorded code 0, replayed code 3"},
		{"stderr not compared", timeline("> "+initReq, "< "+initResp, "! noise", "< "+panelA, "< "+notify, "< "+badge, "exit 0"), ""},
	}
	for _, c := range cases {
		got := kinds(Frames(rec, c.live, Options{}))
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestChangedNamesThePathAndIgnoreRulesApply(t *testing.T) {
	rec := timeline("< " + panelA)
	live := timeline("< " + panelB)
	r := Frames(rec, live, Options{})
	if len(r.Differences) != 1 || len(r.Differences[0].Changes) != 1 {
		t.Fatalf("differences: %+v", r.Differences)
	}
	c := r.Differences[0].Changes[0]
	if c.Path != "params.tree.text" || c.Old != `"Hello"` || c.New != `"Howdy"` {
		t.Errorf("change %+v", c)
	}
	if !strings.Contains(r.Differences[0].Unified, `-      "text": "Hello"`) || !strings.Contains(r.Differences[0].Unified, `+      "text": "Howdy"`) {
		t.Errorf("unified diff:\n%s", r.Differences[0].Unified)
	}
	ignore := func(method string, p []string) bool {
		return method == "ui/setPanel" && strings.Join(p, ".") == "params.tree.text"
	}
	if r := Frames(rec, live, Options{Ignore: ignore}); !r.Same() {
		t.Errorf("ignored path still differs: %s", kinds(r))
	}
	if r := Frames(timeline(`< {"a":1,"b":2}`), timeline(`< {"b":2,"a":1}`), Options{Strict: true}); r.Same() {
		t.Error("--strict ignored member order")
	}
}

func TestResponsesAreNamedByTheirRequest(t *testing.T) {
	rec := timeline("> "+initReq, "< "+initResp)
	live := timeline("> "+initReq, `< {"jsonrpc":"2.0","id":1,"result":{"v":2}}`)
	r := Frames(rec, live, Options{})
	if got := kinds(r); got != "changed response to initialize" {
		t.Errorf("got %q", got)
	}
}

// TestUnifiedMatchesDiffU3 compares the hunk printer with diff -U3.
func TestUnifiedMatchesDiffU3(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("no diff(1) to compare with")
	}
	var a, b []string
	for i := range 60 {
		a = append(a, fmt.Sprintf("line %d", i))
	}
	b = append(b, a...)
	b[5] = "changed 5"
	b = append(b[:20], b[22:]...)
	b = append(b[:40], append([]string{"new a", "new b"}, b[40:]...)...)
	b[len(b)-1] = "last changed"
	ta, tb := strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte(ta), 0o600)
	os.WriteFile(filepath.Join(dir, "b"), []byte(tb), 0o600)
	out, _ := exec.Command("diff", "-U3", "--label", "recorded", "--label", "replayed", filepath.Join(dir, "a"), filepath.Join(dir, "b")).Output()
	if got := Unified(ta, tb, "recorded", "replayed"); got != string(out) {
		t.Errorf("Unified differs from diff -U3:\n--- got\n%s\n--- diff -U3\n%s", got, out)
	}
}

func TestStderrIsItsOwnStream(t *testing.T) {
	rec := timeline("< "+initResp, "! starting", "< "+notify, "! ready", "exit 0")
	// The same lines, interleaved otherwise: the same.
	live := timeline("! starting", "! ready", "< "+initResp, "< "+notify, "exit 0")
	if got := kinds(Frames(rec, live, Options{CompareStderr: true})); got != "" {
		t.Errorf("stderr interleaved otherwise: %q", got)
	}
	// Their own order still counts.
	live = timeline("! ready", "< "+initResp, "! starting", "< "+notify, "exit 0")
	if got := kinds(Frames(rec, live, Options{CompareStderr: true})); got != "moved stderr line" {
		t.Errorf("stderr in another order: %q", got)
	}
}

func TestRequestIDsStandForTheirPairs(t *testing.T) {
	p := `{"jsonrpc":"2.0","id":%d,"method":"prompt/inject","params":{"text":"hi"}}`
	s := `{"jsonrpc":"2.0","id":%d,"method":"terminal/send","params":{"text":"ls"}}`
	rec := timeline("< "+fmt.Sprintf(p, 1), "< "+fmt.Sprintf(s, 2))
	live := timeline("< "+fmt.Sprintf(s, 1), "< "+fmt.Sprintf(p, 2)) // the other order, ids by order
	for name, opts := range map[string]Options{
		"paired by method": {},
		"paired by replay": {Pair: func(seq uint64) (uint64, bool) { return 3 - seq, true }},
	} {
		r := Frames(rec, live, opts)
		if got := kinds(r); got != "moved request prompt/inject" && got != "moved request terminal/send" {
			t.Errorf("%s: %q, want one move", name, got)
		}
	}
	// A request the recording does not have gets an id of its own.
	live = timeline("< "+fmt.Sprintf(p, 1), "< "+fmt.Sprintf(s, 2), "< "+fmt.Sprintf(s, 3))
	if got := kinds(Frames(rec, live, Options{})); got != "extra request terminal/send" {
		t.Errorf("extra request: %q", got)
	}
}

func TestMaskMakesPlaceholdersMatch(t *testing.T) {
	rec := timeline(`< {"jsonrpc":"2.0","method":"x","params":{"token":"«redacted:0123456789ab»"}}`, `! using «redacted:0123456789ab»`)
	live := timeline(`< {"jsonrpc":"2.0","method":"x","params":{"token":"«redacted:ba9876543210»"}}`, `! using «redacted:ba9876543210»`)
	mask := func(s string) string {
		return regexp.MustCompile(`«redacted:[0-9a-f]{12}»`).ReplaceAllString(s, "«redacted»")
	}
	if got := kinds(Frames(rec, live, Options{CompareStderr: true})); got != "changed notification x; changed stderr line" {
		t.Errorf("unmasked: %q", got)
	}
	if got := kinds(Frames(rec, live, Options{CompareStderr: true, Mask: mask})); got != "" {
		t.Errorf("masked: %q", got)
	}
}

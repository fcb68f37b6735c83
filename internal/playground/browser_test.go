package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

const (
	ctxEN = `{"workspace":null,"pane":null,"language":"en"}`
	ctxDE = `{"workspace":null,"pane":null,"language":"de"}`
)

func uiEvent(params string) string {
	return `{"jsonrpc":"2.0","method":"ui/event","params":` + params + `}`
}

// TestPlaygroundInABrowser clicks through widgets-node in a real browser
// as a person would (every interactive element of API 1, the host's
// actions, requests the manifest allows, lacks the permission for, and
// that do not exist, two toasts too fast) and keeps the session: the
// frames in the store are exactly what Agentty sends, the plugin's
// requests got the host's answers, the kept tape passes its replay, and
// the kept host script records the same session again.
//
// With TAPEDECK_SCREENSHOT=FILE it saves the page as FILE (a PNG), the
// README's picture: TAPEDECK_SCREENSHOT=$PWD/docs/playground.png go test
// -run TestPlaygroundInABrowser ./playground from the module root.
func TestPlaygroundInABrowser(t *testing.T) {
	needNode(t)
	bctx := browsertest.Start(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	ctx := p.page(t, bctx)

	field := `.live-panel input.field[data-id=q]`
	do(t, ctx, "type h", chromedp.Click(chromedp.CSS(field)), chromedp.SendKeys(chromedp.CSS(field), "h"))
	lastSays(t, ctx, "q change h")
	do(t, ctx, "type i", chromedp.SendKeys(chromedp.CSS(field), "i"))
	lastSays(t, ctx, "q change hi")
	do(t, ctx, "press Enter", chromedp.SendKeys(chromedp.CSS(field), "\r"))
	lastSays(t, ctx, "q submit hi")
	click := func(sel, last string) {
		t.Helper()
		do(t, ctx, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
		lastSays(t, ctx, last)
	}
	click(`.live-panel .el-button[data-id=go]`, "go click")
	click(`.live-panel .item[data-id=b] .item-title`, "items select b")
	// A row's buttons show while the pointer is on it, as in the host.
	point(t, ctx, `.live-panel .item[data-id=a] .action[data-action=rm]`)
	lastSays(t, ctx, "items action a rm")
	click(`.live-panel .el-choice .option:nth-child(3)`, "size change l")
	click(`.live-panel .el-toggle`, "dark change true")
	ask := func(id, answer string) {
		t.Helper()
		do(t, ctx, "click "+id, chromedp.Click(chromedp.CSS(`.live-panel .el-button[data-id=`+id+`]`)))
		panelSays(t, ctx, answer)
	}
	ask("ctx", "context/get: "+ctxEN)
	ask("ask", `prompt/inject: {"status":"asked"}`)
	ask("ws", `workspace/list: {"code":-32001,"message":"workspace/list needs the \"workspace.read\" permission, which the manifest does not grant"}`)
	ask("bogus", `nope/method: {"code":-32601,"message":"unknown method \"nope/method\""}`)
	do(t, ctx, "notify twice", chromedp.Click(chromedp.CSS(`.live-panel .el-button[data-id=notify]`)))
	waitFor(t, ctx, "the second toast marked dropped", `document.body.dataset.dropped === '1' && document.querySelector('.toast.dropped') !== null`)
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('.toasts .toast.dropped .toast-message').textContent`); got != "Widgets (node fixture): second" {
		t.Errorf("the dropped toast says %q, want second", got)
	}
	do(t, ctx, "scroll to the panel", chromedp.Evaluate[chromedp.Void](`(() => { const l = document.querySelector('.play-left'); l.scrollLeft = 0; l.scrollTop = 0; })()`))
	browsertest.Screenshot(t, ctx, "playground")
	if path := os.Getenv("TAPEDECK_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, "command/execute", chromedp.Click(chromedp.CSS(`.host .command[data-command="widgets.hello"]`)))
	waitFor(t, ctx, "the command's toast", `window.tapedeckPlay.received.some(f => f.m === 'ui/notify' && f.r.includes('hello from a command'))`)
	do(t, ctx, "command/execute widgets.show", chromedp.Click(chromedp.CSS(`.host .command[data-command="widgets.show"]`)))
	waitFor(t, ctx, "ui/showPanel shown", `document.querySelector('.live-panel .panel-note').textContent.startsWith('the plugin asked the host to show its panel')`)
	do(t, ctx, "edit the context", chromedp.SetValue(chromedp.CSS(`.host textarea.context`), ctxDE), chromedp.Click(chromedp.CSS(`.host .context-changed`)))
	waitFor(t, ctx, "the badge", `document.querySelector('.badge-slot .plugin-badge') && document.querySelector('.badge-slot .plugin-badge').textContent === 'ctx'`)
	do(t, ctx, "url/open", chromedp.SetValue(chromedp.CSS(`.host .url-input`), "agentty://plugin/widgets-node/open?from=test"), chromedp.Click(chromedp.CSS(`.host .url-open`)))
	lastSays(t, ctx, "url /widgets-node/open")
	do(t, ctx, "panel/close", chromedp.Click(chromedp.CSS(`.host .panel-close`)))
	waitFor(t, ctx, "the panel closed", `document.querySelector('.live-panel.closed') !== null`)
	n := browsertest.Eval[int](t, ctx, `window.tapedeckPlay.received.filter(f => f.m === 'ui/setPanel' && f.d === 'out').length`)
	do(t, ctx, "panel/open", chromedp.Click(chromedp.CSS(`.host .panel-open`)))
	waitFor(t, ctx, "the panel drawn again", fmt.Sprintf(`window.tapedeckPlay.received.filter(f => f.m === 'ui/setPanel' && f.d === 'out').length > %d && !document.querySelector('.live-panel.closed')`, n))
	// The live timeline shows every frame, and check's findings as they happened.
	if !browsertest.Eval[bool](t, ctx, `[...document.querySelectorAll('.findings-live .finding .rule')].map(e => e.textContent).join(' ').includes('notify-dropped')`) {
		t.Error("the live findings do not show notify-dropped")
	}

	// Keep it.
	do(t, ctx, "keep", chromedp.SetValue(chromedp.CSS(`.keep-name`), "clicks"), chromedp.Click(chromedp.CSS(`.keep-button`)))
	waitFor(t, ctx, "the kept session's replay", `document.querySelector('.kept-list pre') !== null`)
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('.kept-list pre').textContent`); !strings.HasPrefix(got, "ok    tapes/clicks.jsonl  ") {
		t.Errorf("the kept tape's replay says %q, want ok", got)
	}
	waitFor(t, ctx, "a fresh run", `document.body.dataset.run === '2' && document.querySelector('.live-panel .panel .el-button') !== null`)

	// An answer edited in the page is the host's answer from then on; a
	// restart starts the plugin again as the host does.
	do(t, ctx, "edit the answer", chromedp.SetValue(chromedp.CSS(`.answers select`), "prompt/inject"),
		chromedp.SetValue(chromedp.CSS(`.answers textarea`), `{"result":{"status":"sent","paneId":"p9"}}`), chromedp.Click(chromedp.CSS(`.answers .set-answer`)))
	waitFor(t, ctx, "the answer marked edited", `[...document.querySelectorAll('.answers option')].some(o => o.value === 'prompt/inject' && o.textContent.includes('edited'))`)
	ask("ask", `prompt/inject: {"status":"sent","paneId":"p9"}`)
	do(t, ctx, "restart", chromedp.Click(chromedp.CSS(`.play-top .restart`)))
	waitFor(t, ctx, "the plugin started again", `document.body.dataset.run === '3' && document.querySelector('.live-panel .panel .el-button') !== null`)
	panelSays(t, ctx, "last: nothing yet")

	tapePath := filepath.Join(p.dir, "tapes", "clicks.jsonl")
	meta, kept := readTape(t, tapePath)
	if meta.Name != "clicks" || meta.Cwd != ".." {
		t.Errorf("the tape's header: name %q, cwd %q; want clicks, ..", meta.Name, meta.Cwd)
	}
	// The tape is the stored session, frame for frame.
	st, err := store.Open(p.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := playback.FromStore(st, meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lines(stored.Frames, frame.In, frame.Out, frame.Err), lines(kept, frame.In, frame.Out, frame.Err)) {
		t.Error("the tape's frames are not the stored session's")
	}
	host := hostEvents(stored.Frames)
	if len(host) == 0 || !strings.HasPrefix(host[0], `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"widgets-node","name":"Widgets (node fixture)","version":"1.0.0","dir":"`) {
		t.Fatalf("the first host frame is not initialize: %q", host)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"panel/open","params":{"context":` + ctxEN + `}}`,
		uiEvent(`{"element":"q","event":"change","value":"h","context":` + ctxEN + `}`),
		uiEvent(`{"element":"q","event":"change","value":"hi","context":` + ctxEN + `}`),
		uiEvent(`{"element":"q","event":"submit","value":"hi","context":` + ctxEN + `}`),
		uiEvent(`{"element":"go","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"items","event":"select","item":"b","context":` + ctxEN + `}`),
		uiEvent(`{"element":"items","event":"action","item":"a","action":"rm","context":` + ctxEN + `}`),
		uiEvent(`{"element":"size","event":"change","value":"l","context":` + ctxEN + `}`),
		uiEvent(`{"element":"dark","event":"change","value":true,"context":` + ctxEN + `}`),
		uiEvent(`{"element":"ctx","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"ask","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"ws","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"bogus","event":"click","context":` + ctxEN + `}`),
		uiEvent(`{"element":"notify","event":"click","context":` + ctxEN + `}`),
		`{"jsonrpc":"2.0","method":"command/execute","params":{"command":"widgets.hello","args":[],"context":` + ctxEN + `}}`,
		`{"jsonrpc":"2.0","method":"command/execute","params":{"command":"widgets.show","args":[],"context":` + ctxEN + `}}`,
		`{"jsonrpc":"2.0","method":"context/changed","params":{"context":` + ctxDE + `}}`,
		`{"jsonrpc":"2.0","method":"url/open","params":{"path":"/widgets-node/open","query":{"from":"test"},"url":"agentty://plugin/widgets-node/open?from=test","context":` + ctxDE + `}}`,
		`{"jsonrpc":"2.0","method":"panel/close","params":{"context":` + ctxDE + `}}`,
		`{"jsonrpc":"2.0","method":"panel/open","params":{"context":` + ctxDE + `}}`,
		`{"jsonrpc":"2.0","method":"shutdown","params":{}}`,
	}
	if got := host[1:]; !slices.Equal(got, want) {
		t.Errorf("the host frames in the store:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	answers := map[string]string{}
	requests := map[string]string{}
	for _, f := range stored.Frames {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if f.IsEvent() || f.Dir == frame.Err || json.Unmarshal(f.Raw, &m) != nil || len(m.ID) == 0 {
			continue
		}
		if f.Dir == frame.Out && m.Method != "" {
			requests[string(m.ID)] = m.Method
		} else if f.Dir == frame.In && m.Method == "" && requests[string(m.ID)] != "ui/setPanel" {
			answers[requests[string(m.ID)]] = string(f.Raw)
		}
	}
	for method, want := range map[string]string{
		"context/get":    `"result":` + ctxEN + `}`,
		"prompt/inject":  `"result":{"status":"asked"}}`,
		"workspace/list": `"error":{"code":-32001,`,
		"nope/method":    `"error":{"code":-32601,`,
	} {
		if !strings.Contains(answers[method], want) {
			t.Errorf("the host answered %s with %s, want %s", method, answers[method], want)
		}
	}

	// The host script records the same session again.
	script, err := capture.ReadHostScript(filepath.Join(p.dir, "tapes", "clicks.host.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	res, err := capture.Run(context.Background(), &capture.Options{
		Command: []string{"node", "main.mjs"}, Dir: p.dir, Env: os.Environ(), StoreDir: again,
		Host: script, StepTimeout: 20 * time.Second, Signals: make(chan os.Signal), Log: p.log,
	})
	if err != nil || res.Code != 0 || !res.Recorded {
		t.Fatalf("record --host of the kept script: %+v, %v\n%s", res, err, p.log)
	}
	ast, err := store.Open(again, nil)
	if err != nil {
		t.Fatal(err)
	}
	rerecorded, err := playback.FromStore(ast, res.Session)
	if err != nil {
		t.Fatal(err)
	}
	// The same session modulo timing: what the host said, and what the
	// plugin said, each in its order (an answer the host gives at once and
	// a frame the plugin writes at the same time cross either way).
	for _, d := range []frame.Dir{frame.In, frame.Out} {
		if a, b := lines(stored.Frames, d), lines(rerecorded.Frames, d); !slices.Equal(a, b) {
			t.Errorf("record --host of the kept script gave another session (%s):\n%s", d, sideBySide(a, b))
		}
	}
	if a, b := sorted(lines(stored.Frames, frame.Err)), sorted(lines(rerecorded.Frames, frame.Err)); !slices.Equal(a, b) {
		t.Errorf("record --host of the kept script: other stderr:\n%s", sideBySide(a, b))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func sideBySide(a, b []string) string {
	var out strings.Builder
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := "  "
		if x != y {
			mark = "≠ "
		}
		fmt.Fprintf(&out, "%s%d\n   kept:  %s\n   again: %s\n", mark, i+1, x, y)
	}
	return out.String()
}

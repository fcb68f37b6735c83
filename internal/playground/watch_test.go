package playground

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// TestWatchReplaysTheActions: with Watch, a change to main.mjs starts the
// plugin again, plays the actions so far (the panel is where the person
// left it) and shows what changed: the label, nothing else.
func TestWatchReplaysTheActions(t *testing.T) {
	needNode(t)
	bctx := browsertest.Start(t)
	dir := copyPlugin(t, "widgets-node")
	p := play(t, dir, func(o *Options) { o.Watch, o.WatchEvery = true, 50*time.Millisecond })
	ctx := p.page(t, bctx)
	do(t, ctx, "click go", chromedp.Click(chromedp.CSS(`.live-panel .el-button[data-id=go]`)))
	lastSays(t, ctx, "go click")
	do(t, ctx, "choose small", chromedp.Click(chromedp.CSS(`.live-panel .el-choice .option:nth-child(1)`)))
	lastSays(t, ctx, "size change s")

	main := filepath.Join(dir, "main.mjs")
	b, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), `?? "Widgets"`, `?? "Gadgets"`, 1)
	if changed == string(b) {
		t.Fatal("main.mjs has no label to change")
	}
	if err := os.WriteFile(main, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the comparison after the change", `document.body.dataset.watched === '1'`)
	text := browsertest.Eval[string](t, ctx, `document.querySelector('.watch .watch-diff').textContent`)
	for _, want := range []string{`params.tree.children[0].text: "Widgets" → "Gadgets"`, "main.mjs changed"} {
		if !strings.Contains(text+browsertest.Eval[string](t, ctx, `document.querySelector('.watch').textContent`), want) {
			t.Errorf("the watch comparison lacks %q:\n%s", want, text)
		}
	}
	// The page shows the diff the command line prints, line for line (it
	// once showed it as one paragraph with literal \n in it).
	if cli := browsertest.Eval[string](t, ctx, `window.tapedeckPlay.watched.text`); text != strings.TrimSuffix(cli, "\n") || !strings.Contains(text, "\n") || strings.Contains(text, `\n`) {
		t.Errorf("the page's watch diff:\n%s\nwant the command line's:\n%s", text, cli)
	}
	if strings.Contains(text, "missing") || strings.Contains(text, "extra") {
		t.Errorf("the actions were not all played again:\n%s", text)
	}
	// The plugin is where the person left it, with the new label.
	if browsertest.Eval[string](t, ctx, `document.body.dataset.run`) != "2" {
		t.Error("the plugin did not start again")
	}
	panelSays(t, ctx, "Gadgets")
	lastSays(t, ctx, "size change s")
}

package playground

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/playback"
)

// TestKeepItInABrowser times what the playground is for, in a real
// browser, as a person does it with a UI-Gallery-like plugin (tabs, a
// table, a select, a checkbox; favourites with a random id and the time
// kept in its data folder): from opening the page, through the clicks, to
// Keep it's replay saying the golden passes. The kept tape then passes
// 20 replays at once.
func TestKeepItInABrowser(t *testing.T) {
	needNode(t)
	bctx := browsertest.Start(t)
	dir := copyFixture(t, "gallery-node")
	p := play(t, dir, func(o *Options) { o.PinClock = true })
	ctx := browsertest.Tab(t, bctx)
	opened := time.Now()
	browsertest.Open(t, ctx, p.url, "body[data-ready]")
	panel := `.live-panel `
	waitFor(t, ctx, "the first panel", `document.querySelector('.live-panel .tab[data-id=data]') !== null`)
	click := func(sel, what, until string) {
		t.Helper()
		point(t, ctx, panel+sel)
		waitFor(t, ctx, what, until)
	}
	click(`.tab[data-id=data]`, "the data tab", `document.querySelector('.live-panel .el-table[data-id=table]') !== null`)
	click(`.el-table[data-id=table] .table-row[data-id=b]`, "row b selected", `document.querySelector('.live-panel .el-table[data-id=table] .table-row.selected')?.dataset.id === 'b'`)
	click(`.tab[data-id=recipes]`, "the recipes tab", `document.querySelector('.live-panel .el-select[data-id=recipe]') !== null`)
	pick := func(value, label string) {
		t.Helper()
		point(t, ctx, panel+`.el-select[data-id=recipe] .select-trigger`)
		click(`.el-select[data-id=recipe] .menu-item[data-value=`+value+`]`, "the select shows "+label, `document.querySelector('.live-panel .el-select[data-id=recipe] .select-label').textContent === '`+label+`'`)
	}
	pick("ramen", "Ramen")
	click(`.el-button[data-id=save]`, "ramen saved", `window.tapedeckPlay.received.some(f => f.m === 'ui/notify' && f.r.includes('saved ramen at'))`)
	click(`.el-checkbox[data-id=veg]`, "vegetarian ticked", `document.querySelector('.live-panel .el-checkbox[data-id=veg] .box.on') !== null`)
	pick("dal", "Dal")
	click(`.el-button[data-id=save]`, "dal saved", `window.tapedeckPlay.received.some(f => f.m === 'ui/notify' && f.r.includes('saved dal at'))`)
	clicked := time.Now()
	do(t, ctx, "keep", chromedp.SetValue(chromedp.CSS(`.keep-name`), "gallery"), chromedp.Click(chromedp.CSS(`.keep-button`)))
	waitFor(t, ctx, "the kept session's replay", `document.querySelector('.kept-list pre') !== null`)
	passed := time.Now()
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('.kept-list pre').textContent`); !strings.HasPrefix(got, "ok    tapes/gallery.jsonl  ") {
		t.Fatalf("the kept tape's replay says %q, want ok", got)
	}
	t.Logf("from opening the page to a passing golden: %v (the clicks %v, Keep it and its replay %v)",
		passed.Sub(opened).Round(time.Millisecond), clicked.Sub(opened).Round(time.Millisecond), passed.Sub(clicked).Round(time.Millisecond))
	screenshotTo(t, ctx, "keep-it")

	tape := filepath.Join(dir, "tapes", "gallery.jsonl")
	paths := make([]string, 20)
	for i := range paths {
		paths[i] = tape
	}
	n := 0
	err := playback.Suite(context.Background(), paths, &playback.SuiteOptions{Replay: playback.Options{Env: os.Environ(), StoreDir: p.store}, Jobs: len(paths)}, func(i int, r *playback.TapeResult) error {
		if r.Outcome != nil && r.Outcome.Same() {
			n++
		}
		return nil
	})
	if err != nil || n != len(paths) {
		t.Errorf("%d of %d replays at once of the kept tape passed (%v)", n, len(paths), err)
	}
}

// TestKeepItSaysWhyInTheBrowser: a session kept on the real clock
// (--pin-clock=false) of a plugin that says random names and times does
// not replay the same: the page says why in words, and what to do.
func TestKeepItSaysWhyInTheBrowser(t *testing.T) {
	pageProof(t)
	needNode(t)
	bctx := browsertest.Start(t)
	dir := copyFixture(t, "cosmica-node")
	home := t.TempDir()
	p := play(t, dir, func(o *Options) { o.Env = append(os.Environ(), "HOME="+home) })
	ctx := browsertest.Tab(t, bctx)
	browsertest.Open(t, ctx, p.url, "body[data-ready]")
	waitFor(t, ctx, "the first panel", `document.querySelector('.live-panel .el-button[data-id=new]') !== null`)
	point(t, ctx, `.live-panel .el-button[data-id=new]`)
	panelSays(t, ctx, "Cosmica: 1 notes")
	do(t, ctx, "keep", chromedp.SetValue(chromedp.CSS(`.keep-name`), "unpinned"), chromedp.Click(chromedp.CSS(`.keep-button`)))
	waitFor(t, ctx, "why the kept tape fails", `document.querySelector('.kept-list .kept-why li') !== null`)
	why := browsertest.Eval[string](t, ctx, `document.querySelector('.kept-list .kept-why li').textContent`)
	if !strings.HasPrefix(why, "Clock and randomness: the session ran on the real clock") || !strings.Contains(why, "Keep it with the clock pinned") {
		t.Errorf("the page says %q\n%s", why, browsertest.Eval[string](t, ctx, `document.querySelector(".kept-list pre").textContent`))
	}
	if !browsertest.Eval[bool](t, ctx, `document.querySelector('.kept-list pre.fail') !== null`) {
		t.Error("the kept tape's replay is not shown failed")
	}
}

package playground

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

// center scrolls sel into view and returns the middle of its box.
func center(t *testing.T, ctx context.Context, sel string) (float64, float64) {
	t.Helper()
	js, _ := json.Marshal(sel)
	xy := browsertest.Eval[[]float64](t, ctx, `(() => { const e = document.querySelector(`+string(js)+`); if (!e) return []; e.scrollIntoView({block: 'center', inline: 'nearest'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	if len(xy) != 2 {
		t.Fatalf("nothing matches %s", sel)
	}
	return xy[0], xy[1]
}

// point moves the mouse onto sel (what a person's hover reveals shows)
// and clicks it there.
func point(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	x, y := center(t, ctx, sel)
	do(t, ctx, "point at "+sel, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y), chromedp.MouseClickXY(x, y))
}

// drag presses the mouse on from, moves it by (dx, dy) or onto the
// selector to, and lets go there.
func drag(t *testing.T, ctx context.Context, from, to string, dx, dy float64) {
	t.Helper()
	x, y := center(t, ctx, from)
	tx, ty := x+dx, y+dy
	if to != "" {
		tx, ty = center(t, ctx, to)
		x, y = center(t, ctx, from)
	}
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
	}
	for i := 1; i <= 6; i++ {
		f := float64(i) / 6
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+(tx-x)*f, y+(ty-y)*f, chromedp.ButtonLeft))
	}
	steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, tx, ty, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	do(t, ctx, "drag "+from, steps...)
}

// typeQuickly types text into the field sel a key at a time, each key an
// input event as a keyboard's, all within a few milliseconds: a person
// typing without a pause, which a driven browser under load cannot
// promise key by key.
func typeQuickly(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	do(t, ctx, "type "+text, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector(`+jsq(sel)+`); f.focus(); for (const c of `+jsq(text)+`) { f.value += c; f.setSelectionRange(f.value.length, f.value.length); f.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: c})); } })()`))
}

func screenshotTo(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	do(t, ctx, "scroll to the panel", chromedp.Evaluate[chromedp.Void](`(() => { const l = document.querySelector('.play-left'); l.scrollLeft = 0; l.scrollTop = 0; })()`))
	browsertest.Screenshot(t, ctx, name)
	if dir := os.Getenv("TAPEDECK_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestElementsInABrowser clicks through elements-node, a plugin with every
// element type and field of API 1 to 4 (docs/agentty-elements.md), in a
// real browser: every control sends the ui/event the Agentty host sends
// (asserted byte for byte in the store), typing is sent as the host sends
// it (one change when it pauses, the rest before another control's event),
// what the page shows is what the plugin last drew (a toggle the plugin
// keeps off stays off, a field it clears is empty), the popover and the
// toasts are beside the panel, and a crash shows the plugin's last stderr
// lines with Restart. The same session drawn by the HTML report shows no
// chip for a field the host draws.
//
// With TAPEDECK_SCREENSHOTS=DIR it saves its pictures into DIR:
// TAPEDECK_SCREENSHOTS=$PWD/docs go test -run TestElementsInABrowser
// ./internal/playground from the module root.
func TestElementsInABrowser(t *testing.T) {
	pageProof(t)
	needNode(t)
	bctx := browsertest.Start(t)
	p := play(t, copyPlugin(t, "elements-node"), nil)
	ctx := p.page(t, bctx)
	has := func(what, expr string) {
		t.Helper()
		if !browsertest.Eval[bool](t, ctx, expr) {
			t.Errorf("%s: %s is false", what, expr)
		}
	}
	click := func(sel, last string) {
		t.Helper()
		point(t, ctx, sel)
		lastSays(t, ctx, last)
	}
	panel := `.live-panel .panel `

	// Typing: one change once it pauses, then submit; the plugin clears the
	// field, and it is empty.
	q := panel + `input.field[data-id=q]`
	typeQuickly(t, ctx, q, "plugin store")
	lastSays(t, ctx, "q change plugin store")
	do(t, ctx, "press Enter", chromedp.SendKeys(chromedp.CSS(q), "\r"))
	lastSays(t, ctx, "q submit plugin store")
	panelSays(t, ctx, "query: plugin store")
	has("the field the plugin cleared is empty", `document.querySelector(`+jsq(q)+`).value === ''`)
	// Typing then a click at once: the typing goes first.
	typeQuickly(t, ctx, q, "ab")
	click(panel+`.el-button[data-id=go]`, "go click")
	has("the field is the plugin's again", `document.querySelector(`+jsq(q)+`).value === ''`)
	// A text area with completions: {{ba offers baseUrl, Enter inserts it.
	body := panel + `textarea.field[data-id=body]`
	typeQuickly(t, ctx, body, "{{ba")
	waitFor(t, ctx, "the suggestion", `[...document.querySelectorAll('.el-input .suggestion .label')].some(e => e.textContent === 'baseUrl')`)
	do(t, ctx, "pick it", chromedp.KeyEvent("\r"))
	lastSays(t, ctx, "body change {{baseUrl}}")
	has("the text area keeps what was typed", `document.querySelector(`+jsq(body)+`).value === '{{baseUrl}}'`)
	has("a mono field", `document.querySelector(`+jsq(body)+`).classList.contains('mono')`)

	// Buttons.
	click(panel+`.el-button[data-id=save]`, "save click")
	point(t, ctx, panel+`.el-button[data-id=more]`)
	click(panel+`.menu-item[data-value=del]`, "more select del")
	click(panel+`.el-button[data-id=trash]`, "trash click")
	click(panel+`.el-button[data-id=ghost]`, "ghost click")
	has("a disabled button", `document.querySelector('.live-panel .el-button[data-id=off]').disabled`)
	has("an icon-only button draws the icon alone", `document.querySelector('.live-panel .el-button[data-id=trash]').classList.contains('icon-only') && document.querySelector('.live-panel .el-button[data-id=trash] svg.icon[data-icon="trash-2"]') !== null`)

	// Choices: nothing changes until the plugin draws it changed.
	point(t, ctx, panel+`.el-select[data-id=region] .select-trigger`)
	click(panel+`.el-select[data-id=region] .menu-item[data-value=tokyo]`, "region change tokyo")
	waitFor(t, ctx, "the select shows Tokyo", `document.querySelector('.live-panel .el-select[data-id=region] .select-label').textContent === 'Tokyo (ap-northeast-1)'`)
	click(panel+`.el-choice[data-id=plan] .option[data-value=team]`, "plan change team")
	has("the choice the plugin drew", `document.querySelector('.live-panel .el-choice[data-id=plan] .option.selected').dataset.value === 'team'`)
	click(panel+`.el-checkbox[data-id=agree]`, "agree change true")
	has("the checkbox the plugin drew ticked", `document.querySelector('.live-panel .el-checkbox[data-id=agree] .box.on svg[data-icon=check]') !== null`)
	click(panel+`.el-toggle[data-id=dark]`, "dark change true")
	has("the toggle the plugin drew on", `document.querySelector('.live-panel .el-toggle[data-id=dark] .switch.on') !== null`)
	click(panel+`.el-toggle[data-id=lock]`, "lock change true")
	has("a toggle the plugin kept off stays off", `document.querySelector('.live-panel .el-toggle[data-id=lock] .switch.off') !== null`)
	screenshotTo(t, ctx, "elements-inputs")

	// The popover, beside the panel; the toast too, and it goes.
	click(panel+`.el-button[data-id=settings]`, "settings click")
	waitFor(t, ctx, "the popover", `document.querySelector('.popover-slot .popover-card[data-id=prefs]') !== null`)
	has("the popover is beside the panel", `document.querySelector('.popover-slot .popover-card').getBoundingClientRect().left >= document.querySelector('.live-panel .panel').getBoundingClientRect().right`)
	click(`.popover-slot .el-toggle[data-id="pop.toggle"]`, "pop.toggle change true")
	click(`.popover-slot .popover-close`, "prefs close")
	waitFor(t, ctx, "the popover gone", `document.querySelector('.popover-slot .popover-card') === null`)
	click(panel+`.el-button[data-id=toast]`, "toast click")
	waitFor(t, ctx, "the toast", `[...document.querySelectorAll('.toasts .toast-message')].some(e => e.textContent === 'Elements (node fixture): saved')`)
	has("the toast is beside the panel, not over it", `document.querySelector('.toasts .toast').getBoundingClientRect().left >= document.querySelector('.live-panel .panel').getBoundingClientRect().right`)
	waitFor(t, ctx, "the toast gone", `document.querySelector('.toasts .toast') === null`)

	// Data: tabs, table, list.
	click(panel+`.tab[data-id=data]`, "tabs change data")
	waitFor(t, ctx, "the data tab", `document.querySelector('.live-panel .el-table[data-id=runs]') !== null`)
	click(panel+`.el-table[data-id=runs] .table-row[data-id=test]`, "runs select test")
	has("the selected row", `document.querySelector('.live-panel .el-table[data-id=runs] .table-row.selected').dataset.id === 'test'`)
	click(panel+`.el-list[data-id=tasks] .item[data-id=b] .item-title`, "tasks select b")
	has("the selected item", `document.querySelector('.live-panel .el-list[data-id=tasks] .item.selected').dataset.id === 'b'`)
	click(panel+`.el-list[data-id=tasks] .item[data-id=a] .action[data-action=remove]`, "tasks action a remove")
	has("two row actions with two icons", `(() => { const i = [...document.querySelectorAll('.live-panel .item[data-id=a] .action svg.icon')]; return i.length === 2 && i[0].dataset.icon !== i[1].dataset.icon && i[0].innerHTML !== i[1].innerHTML; })()`)
	point(t, ctx, panel+`.el-list[data-id=tasks] .item[data-id=b] .action.more-actions`)
	click(panel+`.el-list[data-id=tasks] .item[data-id=b] .menu-item[data-value=a4]`, "tasks action b a4")
	click(panel+`.el-card[data-id=tip] .card-close`, "tip close")
	screenshotTo(t, ctx, "elements-data")

	// Flow: select, move, insert, resize.
	click(panel+`.tab[data-id=flow]`, "tabs change flow")
	waitFor(t, ctx, "the flow tab", `document.querySelector('.live-panel .el-flow[data-id=steps]') !== null`)
	click(panel+`.flow-step[data-id=post]`, "steps select post")
	has("the selected step", `document.querySelector('.live-panel .flow-step.selected').dataset.id === 'post'`)
	drag(t, ctx, panel+`.flow-step[data-id=archive]`, panel+`.flow-step[data-id=collect]`, 0, 0)
	lastSays(t, ctx, "steps move collect archive")
	has("the step the plugin moved", `document.querySelector('.live-panel .flow-step').dataset.id === 'archive'`)
	point(t, ctx, panel+`.flow-insert[data-after=collect]`)
	click(panel+`.flow-gap .menu-anchor:has(.flow-insert[data-after=collect]) .menu-item[data-value=wait]`, "steps insert wait collect")
	drag(t, ctx, panel+`.resize-handle`, "", 60, 0)
	lastSays(t, ctx, "split resize 260")
	panelSays(t, ctx, "width: 260")
	screenshotTo(t, ctx, "elements-flow")
	click(panel+`.tab[data-id=flow] .tab-close`, "tabs close flow")
	point(t, ctx, panel+`.tab-add`)
	click(panel+`.menu-item[data-value=notes]`, "tabs add notes")

	// check knows every element and field the host reads: nothing to say.
	if found := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('.findings-live .finding')].map(e => e.textContent)`); len(found) != 0 {
		t.Errorf("check found, in a plugin of host shapes only:\n%s", strings.Join(found, "\n"))
	}

	// A crash: the plugin's last lines, the panel disabled, Restart.
	session := browsertest.Eval[string](t, ctx, `document.body.dataset.session || ''`)
	point(t, ctx, panel+`.el-button[data-id=crash]`)
	waitFor(t, ctx, "the crash banner", `document.body.dataset.crashed === 'true' && !document.querySelector('.crash-banner').hidden`)
	log := browsertest.Eval[string](t, ctx, `document.querySelector('.crash-banner .crash-log').textContent`)
	if !strings.Contains(log, "Error: the fixture was told to crash\n    at ") || !strings.HasSuffix(log, "elements-node: exiting with 3") {
		t.Errorf("the crash banner's log:\n%s\nwant the stack trace, whole lines, then the last line", log)
	}
	has("the banner says how it ended", `document.querySelector('.crash-title').textContent.endsWith('exit 3')`)
	has("the panel is disabled", `getComputedStyle(document.querySelector('.live-panel .panel')).pointerEvents === 'none'`)
	screenshotTo(t, ctx, "elements-crash")
	if session == "" {
		session = browsertest.Eval[string](t, ctx, `document.body.dataset.session || ''`)
	}
	point(t, ctx, `.crash-banner .crash-restart`)
	waitFor(t, ctx, "the plugin started again", `document.body.dataset.run === '2' && document.body.dataset.crashed === 'false' && document.querySelector('.live-panel .panel .el-button') !== null`)

	// The host frames in the store, byte for byte.
	st, err := store.Open(p.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := playback.FromStore(st, session)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hostEvents(stored.Frames) {
		if strings.Contains(h, `"method":"ui/event"`) {
			got = append(got, h)
		}
	}
	ev := func(params string) string { return uiEvent(params[:len(params)-1] + `,"context":` + ctxEN + `}`) }
	want := []string{
		ev(`{"element":"q","event":"change","value":"plugin store"}`),
		ev(`{"element":"q","event":"submit","value":"plugin store"}`),
		ev(`{"element":"q","event":"change","value":"ab"}`),
		ev(`{"element":"go","event":"click"}`),
		ev(`{"element":"body","event":"change","value":"{{baseUrl}}"}`),
		ev(`{"element":"save","event":"click"}`),
		ev(`{"element":"more","event":"select","value":"del"}`),
		ev(`{"element":"trash","event":"click"}`),
		ev(`{"element":"ghost","event":"click"}`),
		ev(`{"element":"region","event":"change","value":"tokyo"}`),
		ev(`{"element":"plan","event":"change","value":"team"}`),
		ev(`{"element":"agree","event":"change","value":true}`),
		ev(`{"element":"dark","event":"change","value":true}`),
		ev(`{"element":"lock","event":"change","value":true}`),
		ev(`{"element":"settings","event":"click"}`),
		ev(`{"element":"pop.toggle","event":"change","value":true}`),
		ev(`{"element":"prefs","event":"close"}`),
		ev(`{"element":"toast","event":"click"}`),
		ev(`{"element":"tabs","event":"change","value":"data"}`),
		ev(`{"element":"runs","event":"select","item":"test"}`),
		ev(`{"element":"tasks","event":"select","item":"b"}`),
		ev(`{"element":"tasks","event":"action","item":"a","action":"remove"}`),
		ev(`{"element":"tasks","event":"action","item":"b","action":"a4"}`),
		ev(`{"element":"tip","event":"close"}`),
		ev(`{"element":"tabs","event":"change","value":"flow"}`),
		ev(`{"element":"steps","event":"select","item":"post"}`),
		ev(`{"element":"steps","event":"move","value":"collect","item":"archive"}`),
		ev(`{"element":"steps","event":"insert","value":"wait","item":"collect"}`),
		ev(`{"element":"split","event":"resize","value":260.0}`),
		ev(`{"element":"tabs","event":"close","value":"flow"}`),
		ev(`{"element":"tabs","event":"add","value":"notes"}`),
		ev(`{"element":"crash","event":"click"}`),
	}
	if !slices.Equal(got, want) {
		t.Errorf("the ui/event frames in the store:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The same session as the HTML report draws it (tapedeck show --html):
	// no chip for a field the host draws, every element type, real icons.
	report := filepath.Join(t.TempDir(), "elements.html")
	f, err := os.Create(report)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := htmlreport.Session(w, stored.Meta, htmlreport.Slice(stored.Frames), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rctx := browsertest.Tab(t, bctx)
	browsertest.OpenFile(t, rctx, report, "body[data-ready]")
	do(t, rctx, "open the panels view", chromedp.Click(chromedp.CSS(`nav .tab[data-view=panels]`)), chromedp.WaitVisible(chromedp.CSS(`#view-panels .panel`)))
	do(t, rctx, "show every panel", chromedp.Evaluate[chromedp.Void](`(() => { const m = document.querySelector('#view-panels > button.more'); while (m && !m.hidden) m.click(); })()`))
	if chips := browsertest.Eval[[]string](t, rctx, `[...document.querySelectorAll('#view-panels .extra')].map(e => e.closest('[data-path]').dataset.path + ' ' + e.textContent)`); len(chips) != 0 {
		t.Errorf("the report shows %d chips for fields the host draws: %q", len(chips), chips)
	}
	types := browsertest.Eval[[]string](t, rctx, `[...new Set([...document.querySelectorAll('#view-panels [data-type]')].map(e => e.dataset.type))].sort()`)
	for _, ty := range []string{"column", "row", "section", "text", "button", "input", "list", "choice", "toggle", "badge", "spinner", "divider",
		"card", "grid", "tabs", "table", "keyValue", "stat", "progress", "callout", "select", "checkbox", "code", "flow", "popover"} {
		if !slices.Contains(types, ty) {
			t.Errorf("the report draws no %s (drawn: %v)", ty, types)
		}
	}
	if n := browsertest.Eval[int](t, rctx, `document.querySelectorAll('#view-panels svg.icon').length`); n == 0 {
		t.Error("the report draws no icons")
	}
	if !browsertest.Eval[bool](t, rctx, `[...document.querySelectorAll('#view-panels .item[data-id=c] svg.icon')].some(i => i.dataset.icon === 'puzzle')`) {
		t.Error("an icon the host does not have is not drawn as puzzle")
	}
}

func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

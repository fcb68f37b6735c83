package htmlreport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/internal/diff"
)

// tab opens file in a new tab of the browser and waits for the page to say
// it is ready.
func tab(t *testing.T, bctx context.Context, file string) context.Context {
	t.Helper()
	ctx := browsertest.Tab(t, bctx)
	browsertest.OpenFile(t, ctx, file, "body[data-ready]")
	return ctx
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// writeReport writes a report with write into a file of the test's.
func writeReport(t *testing.T, name string, write func(io.Writer) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBrowser(t *testing.T) {
	bctx := browsertest.Start(t)

	t.Run("panels", func(t *testing.T) {
		meta, frames := readTape(t, "hello-node.jsonl")
		b := &builder{frames: frames, at: frames[len(frames)-1].At}
		b.line(frame.Out, setPanel(90, allElements))
		path := writeReport(t, "panels.html", func(w io.Writer) error { return Session(w, meta, Slice(b.frames), nil) })
		ctx := tab(t, bctx, path)
		browsertest.Screenshot(t, ctx, "session-timeline")
		do(t, ctx, "open the panels view", chromedp.Click(chromedp.CSS(`nav .tab[data-view=panels]`)), chromedp.WaitVisible(chromedp.CSS(`#view-panels .panel`)))
		greet := browsertest.Eval[bool](t, ctx, `[...document.querySelectorAll('#view-panels .el-button')].some(b => b.textContent.trim() === 'Greet' && b.classList.contains('variant-primary'))`)
		if !greet {
			t.Error(`no primary button "Greet" drawn from the hello tape`)
		}
		// The last panel holds every element type.
		last := `document.querySelector('#view-panels .panel-card:last-child .panel')`
		types := browsertest.Eval[[]string](t, ctx, `[...new Set([...`+last+`.querySelectorAll('[data-type]')].map(e => e.dataset.type))]`)
		have := map[string]bool{}
		for _, ty := range types {
			have[ty] = true
		}
		for _, ty := range elementTypes {
			if !have[ty] {
				t.Errorf("no element of type %s drawn", ty)
			}
		}
		checks := map[string]string{
			"unknown type labelled":      `.el-unknown .unknown-label`,
			"gap class":                  `.el-column.gap-large`,
			"title style":                `.el-text.style-title`,
			"danger variant":             `.el-button.variant-danger`,
			"disabled button":            `.el-button[disabled]`,
			"success tone":               `.el-badge.tone-success`,
			"selected choice":            `.el-choice .option.selected`,
			"toggle on":                  `.el-toggle .switch.on`,
			"stat detail in its tone":    `.el-stat.tone-success .stat-detail`,
			"list item action":           `.el-list .item .btn.action`,
			"empty list":                 `.el-list .empty-state`,
			"grid of two columns":        `.el-grid[data-path="tree.children[3].children[0]"]`,
			"table cell":                 `.el-table .td[data-path="tree.children[3].children[2].rows[1].cells[0]"]`,
			"table column aligned":       `.el-table .th.align-end`,
			"image not loaded from net":  `.el-image .image-placeholder`,
			"graph chart":                `.el-graph svg polyline`,
			"element path on root":       `.el-column[data-path="tree"]`,
			"element path on a child":    `.el-button[data-path="tree.children[1].children[0]"]`,
			"list item path":             `.item[data-path="tree.children[2].children[5].items[0]"]`,
			"checked checkbox":           `.el-checkbox .box.on`,
			"error callout":              `.el-callout.tone-error`,
			"the select shows its value": `.el-select .select-label:not(.unset)`,
			"popover beside the panel":   `.popover-card .popover-body .el-text`,
			"real icons":                 `.el-button svg.icon[data-icon=play]`,
			"flow step done":             `.flow-step.state-done`,
			"progress bar at 40 percent": `.el-progress .fill[style*="40"]`,
		}
		for what, sel := range checks {
			if !browsertest.Eval[bool](t, ctx, last+`.querySelector(`+jsString(sel)+`) !== null`) {
				t.Errorf("%s: nothing matches %s", what, sel)
			}
		}
		// A chip only for the one member the host does not read.
		if got := browsertest.Eval[[]string](t, ctx, `[...`+last+`.querySelectorAll('.extra')].map(e => e.textContent)`); len(got) != 1 || got[0] != "colorred" {
			t.Errorf("chips %q, want one for the badge's color", got)
		}
		if got := browsertest.Eval[string](t, ctx, last+`.querySelector('.el-unknown .unknown-label').textContent`); got != "unknown element type sparkle" {
			t.Errorf("unknown element labelled %q, want %q", got, "unknown element type sparkle")
		}
		for _, label := range []string{"Primary", "Switch me", "First item", "Remove", "A card", "RUNS", "42", "Upload", "One", "a.txt", "Model", "Heads up", "Check me", "x := 1", "Plan", "More", "a cat", "Nothing yet", "Why"} {
			if !browsertest.Eval[bool](t, ctx, last+`.textContent.includes(`+jsString(label)+`)`) {
				t.Errorf("label %q not drawn", label)
			}
		}
		do(t, ctx, "scroll to the last panel", chromedp.Evaluate[chromedp.Void](last+`.scrollIntoView()`))
		browsertest.Screenshot(t, ctx, "session-panels")
	})

	// A ui/setPanel the host answered with an error is drawn as rejected:
	// the page pairs each request with its answer as it loads.
	t.Run("rejected", func(t *testing.T) {
		b := &builder{}
		b.line(frame.Out, setPanel(1, `{"type":"text","text":"refused"}`))
		b.line(frame.In, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad tree"}}`)
		b.line(frame.Out, setPanel(2, `{"type":"text","text":"taken"}`))
		b.line(frame.In, `{"jsonrpc":"2.0","id":2,"result":null}`)
		path := writeReport(t, "rejected.html", func(w io.Writer) error { return Session(w, nil, Slice(b.frames), nil) })
		ctx := tab(t, bctx, path)
		do(t, ctx, "open the panels view", chromedp.Click(chromedp.CSS(`nav .tab[data-view=panels]`)), chromedp.WaitVisible(chromedp.CSS(`#view-panels .panel`)))
		if got := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#view-panels .panel-card.rejected')].map(f => f.dataset.seq)`); len(got) != 1 || got[0] != "1" {
			t.Errorf("panels drawn as rejected: %q, want frame 1's alone", got)
		}
	})

	t.Run("timeline", func(t *testing.T) {
		meta, frames := readTape(t, "hello-node.jsonl")
		findings := []Finding{{Seq: 10, Level: "warning", Rule: "notify-too-fast", Method: "ui/notify", Message: "dropped: within 700 ms of the last"}}
		path := writeReport(t, "timeline.html", func(w io.Writer) error { return Session(w, meta, Slice(frames), findings) })
		ctx := tab(t, bctx, path)
		all := browsertest.Eval[int](t, ctx, `document.querySelectorAll('#view-timeline .row').length`)
		if all != len(frames) {
			t.Errorf("%d rows drawn, want %d", all, len(frames))
		}
		if !browsertest.Eval[bool](t, ctx, `document.querySelector('#view-timeline .row[data-seq="10"].has-finding .finding-mark.level-warning') !== null`) {
			t.Error("the finding is not marked on frame 10")
		}
		// Lanes: host frames on the left, the plugin's and stderr on the right, events across.
		lanes := browsertest.Eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#view-timeline .row')].map(r => [r.dataset.seq, r.querySelector('.fcard').parentElement.className]))`)
		for _, f := range frames {
			want := map[frame.Dir]string{frame.In: "lane-host", frame.Out: "lane-plugin", frame.Err: "lane-plugin"}[f.Dir]
			if f.IsEvent() {
				want = "lane-across"
			}
			if got := lanes[fmt.Sprint(f.Seq)]; !strings.Contains(got, want) {
				t.Errorf("frame %d in lane %q, want %s", f.Seq, got, want)
			}
		}
		// A response links to its request with the latency.
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .row[data-seq="3"] .link').textContent`); !strings.HasPrefix(got, "↩ ") || !strings.HasSuffix(got, " · 1") {
			t.Errorf("response link %q, want ↩ LATENCY · 1", got)
		}
		// And the request to its answer, which the page finds as it loads
		// (the data names only a response's request).
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .row[data-seq="1"] .link').textContent`); got != "→ 3" {
			t.Errorf("request link %q, want → 3", got)
		}
		// Opening a frame shows its pretty JSON and the panel of that moment.
		do(t, ctx, "open frame 9", chromedp.Click(chromedp.CSS(`#view-timeline .row[data-seq="9"] .line`)), chromedp.WaitVisible(chromedp.CSS(`#view-timeline .row[data-seq="9"] .detail pre.json`)))
		pretty := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .row[data-seq="9"] .detail pre.json').textContent`)
		if !strings.Contains(pretty, "\n  \"method\": \"ui/setPanel\"") {
			t.Errorf("frame 9 expanded to %q, want pretty JSON", pretty)
		}
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .moment .el-text.style-muted').textContent`); got != "clicked 1 times" {
			t.Errorf("panel at frame 9 says %q, want %q", got, "clicked 1 times")
		}
		do(t, ctx, "select frame 8", chromedp.Click(chromedp.CSS(`#view-timeline .row[data-seq="8"] .line`)))
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .moment .el-text.style-muted').textContent`); got != "clicked 0 times" {
			t.Errorf("panel at frame 8 says %q, want %q", got, "clicked 0 times")
		}
		browsertest.Screenshot(t, ctx, "session-timeline-open")

		// The method filter hides what does not match; responses go with their request's method.
		do(t, ctx, "filter by method", chromedp.SendKeys(chromedp.CSS(`#view-timeline .f-method`), "ui/setPanel"))
		methods := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .row')].map(r => r.dataset.method)`)
		if len(methods) == 0 || len(methods) >= all {
			t.Errorf("%d rows after filtering by method, want some of %d", len(methods), all)
		}
		for _, m := range methods {
			if m != "ui/setPanel" {
				t.Errorf("row with method %q shown under the filter ui/setPanel", m)
			}
		}
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .f-count').textContent`); !strings.Contains(got, fmt.Sprintf("%d of %d", len(methods), len(frames))) {
			t.Errorf("count says %q", got)
		}
		browsertest.Screenshot(t, ctx, "session-filtered")
		// Direction and text search.
		do(t, ctx, "clear the method", chromedp.Evaluate[chromedp.Void](`(() => { const m = document.querySelector('#view-timeline .f-method'); m.value = ''; m.dispatchEvent(new Event('input')); })()`),
			chromedp.Click(chromedp.CSS(`#view-timeline .f-dir[value=in]`)))
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('#view-timeline .row.dir-in').length`); n != 0 {
			t.Errorf("%d host rows shown with host → plugin unticked", n)
		}
		do(t, ctx, "search", chromedp.SendKeys(chromedp.CSS(`#view-timeline .f-search`), "ACTION RM"))
		if got := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .row')].map(r => r.dataset.seq)`); len(got) != 1 {
			t.Errorf("search for 'action rm' shows frames %v, want the one stderr line", got)
		}
	})

	t.Run("safe", func(t *testing.T) {
		b := &builder{}
		b.line(frame.In, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"note":"`+jsonEscape(xssImg)+`"}}`)
		b.line(frame.Err, xssScript)
		b.line(frame.Err, xssImg)
		b.line(frame.Out, `{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"`+jsonEscape(xssScript)+`","kind":"info"}}`)
		b.line(frame.Out, setPanel(1, `{"type":"column","children":[{"type":"text","text":"`+jsonEscape(xssScript)+`"},{"type":"button","id":"x","label":"`+jsonEscape(xssImg)+`","variant":"primary\" onmouseover=\"window.__pwned=3"},{"type":"`+jsonEscape(xssImg)+`"},{"type":"image","src":"javascript:window.__pwned=4","alt":"x"}]}`))
		b.line(frame.Out, xssScript+"\xff")
		meta := &frame.Session{ID: "01xss", Name: xssScript, Command: []string{xssImg}}
		findings := []Finding{{Seq: 2, Level: "error", Rule: "r", Message: xssImg, Path: xssScript}}
		path := writeReport(t, "safe.html", func(w io.Writer) error { return Session(w, meta, Slice(b.frames), findings) })
		ctx := tab(t, bctx, path)
		do(t, ctx, "open the panels and findings", chromedp.Click(chromedp.CSS(`nav .tab[data-view=panels]`)), chromedp.WaitVisible(chromedp.CSS(`#view-panels .panel`)),
			chromedp.Click(chromedp.CSS(`nav .tab[data-view=findings]`)), chromedp.WaitVisible(chromedp.CSS(`#view-findings table`)),
			chromedp.Click(chromedp.CSS(`nav .tab[data-view=timeline]`)), chromedp.Click(chromedp.CSS(`#view-timeline .row[data-seq="2"] .line`)),
			chromedp.WaitVisible(chromedp.CSS(`#view-timeline .row[data-seq="2"] .detail`)))
		if got := browsertest.Eval[string](t, ctx, `typeof window.__pwned`); got != "undefined" {
			t.Errorf("window.__pwned is %s: frame content ran as script", got)
		}
		if n := browsertest.Eval[int](t, ctx, `document.scripts.length`); n != 2 {
			t.Errorf("%d script elements, want 2", n)
		}
		if n := browsertest.Eval[int](t, ctx, `document.images.length`); n != 0 {
			t.Errorf("%d img elements, want none", n)
		}
		if n := browsertest.Eval[int](t, ctx, `[...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length`); n != 0 {
			t.Errorf("%d elements with an event handler attribute", n)
		}
		text := browsertest.Eval[string](t, ctx, `document.body.innerText`)
		for _, want := range []string{xssScript, xssImg, `\xff`} {
			if !strings.Contains(text, want) {
				t.Errorf("the page does not show %q as text", want)
			}
		}
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-panels .el-unknown .unknown-label').textContent`); got != "unknown element type "+xssImg {
			t.Errorf("the unknown element is labelled %q", got)
		}
		if got := browsertest.Eval[string](t, ctx, `document.title`); got != "tapedeck · session "+xssScript+" (01xss)" {
			t.Errorf("title %q", got)
		}
		browsertest.Screenshot(t, ctx, "safe")
	})

	t.Run("replay", func(t *testing.T) {
		rec, live := labelReplay("Hello", "Howdy")
		res := diff.Frames(rec, live, diff.Options{})
		in := ReplayInput{Name: "label.jsonl", Meta: &frame.Session{ID: "01lab", Name: "label"}, Recorded: Slice(rec), Live: Slice(live), Diff: res, Notes: []string{"a note"}}
		path := writeReport(t, "replay.html", func(w io.Writer) error { return Replay(w, in) })
		ctx := tab(t, bctx, path)
		for _, side := range []string{"recorded", "live"} {
			sel := `.difference .side-` + side + ` .panel [data-path="tree.children[0]"]`
			if !browsertest.Eval[bool](t, ctx, `document.querySelector(`+jsString(sel)+`)?.classList.contains('outline') === true`) {
				t.Errorf("the changed text is not outlined on the %s side", side)
			}
			if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll(`+jsString(`.difference .side-`+side+` .panel .outline`)+`).length`); n != 1 {
				t.Errorf("%d elements outlined on the %s side, want 1", n, side)
			}
		}
		texts := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('.difference .panel .outline')].map(e => e.textContent)`)
		if strings.Join(texts, ",") != "Hello,Howdy" {
			t.Errorf("outlined %q, want Hello then Howdy", texts)
		}
		lines := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('.json-diff td.changed-line')].map(e => e.textContent.trim())`)
		if len(lines) != 2 || !strings.Contains(lines[0], "Hello") || !strings.Contains(lines[1], "Howdy") {
			t.Errorf("changed lines %q, want the Hello line against the Howdy line", lines)
		}
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('.verdict').textContent`); got != "1 difference" {
			t.Errorf("verdict %q", got)
		}
		browsertest.Screenshot(t, ctx, "replay-differences")
		// The replayed side links into the replayed timeline.
		do(t, ctx, "jump to the replayed frame", chromedp.Click(chromedp.CSS(`.difference .where .link:last-child`)),
			chromedp.WaitVisible(chromedp.CSS(`#view-replayed .row.selected .detail`)))
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-replayed .moment .el-text').textContent`); got != "Howdy" {
			t.Errorf("replayed panel at the difference says %q, want Howdy", got)
		}
		browsertest.Screenshot(t, ctx, "replay-timeline")
	})

	t.Run("large", func(t *testing.T) {
		const n = 100_000
		b := &builder{}
		for i := 0; len(b.frames) < n; i++ {
			switch {
			case i%1000 == 0:
				b.line(frame.Out, setPanel(i, fmt.Sprintf(`{"type":"column","children":[{"type":"text","text":"step %d","style":"title"},{"type":"progress","value":%d,"max":%d}]}`, i, i, n)))
			case i%4 == 0:
				b.line(frame.In, fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/event","params":{"element":"go","event":"click","n":%d,"context":{}}}`, i))
			case i%4 == 1:
				b.line(frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":"message number %d","kind":"info"}}`, i))
			case i%4 == 2:
				b.line(frame.Err, fmt.Sprintf("log line %d", i))
			default:
				b.line(frame.Out, fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"%d"}}`, i%1000))
			}
		}
		b.frames = b.frames[:n]
		start := time.Now()
		path := writeReport(t, "large.html", func(w io.Writer) error { return Session(w, &frame.Session{ID: "01large"}, Slice(b.frames), nil) })
		gen := time.Since(start)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := tab(t, bctx, path)
		ready := browsertest.Eval[string](t, ctx, `document.body.dataset.ready`)
		t.Logf("100,000 frames: report written in %v (%.1f MB); the page was ready %s ms after navigation started", gen.Round(time.Millisecond), float64(fi.Size())/1e6, ready)
		if rows := browsertest.Eval[int](t, ctx, `document.querySelectorAll('#view-timeline .row').length`); rows == 0 || rows > 200 {
			t.Errorf("%d rows in the DOM, want only those in view", rows)
		}
		do(t, ctx, "scroll to the end", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('#view-timeline .scroller'); s.scrollTop = s.scrollHeight; })()`),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#view-timeline .row[data-seq="%d"]`, n))))
		do(t, ctx, "filter", chromedp.SendKeys(chromedp.CSS(`#view-timeline .f-search`), "message number 99997"),
			chromedp.WaitVisible(chromedp.CSS(`#view-timeline .row[data-seq="99998"]`)))
		do(t, ctx, "open it", chromedp.Click(chromedp.CSS(`#view-timeline .row[data-seq="99998"] .line`)),
			chromedp.WaitVisible(chromedp.CSS(`#view-timeline .moment .el-progress`)))
		if got := browsertest.Eval[string](t, ctx, `document.querySelector('#view-timeline .moment .el-text').textContent`); got != "step 99000" {
			t.Errorf("panel at frame 99998 says %q, want step 99000", got)
		}
		browsertest.Screenshot(t, ctx, "large")
	})
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonEscape escapes s for use inside a JSON string.
func jsonEscape(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(jsString(s), `"`), `"`)
}

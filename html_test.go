package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The HTML reports end to end: written by the real binary (or, for show,
// by the function show calls), opened from disk in a headless Chromium.

// htmlBrowser starts a headless Chromium for the test; it skips the test,
// saying why, when none is installed.
func htmlBrowser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		path = "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil && path == "" {
			path = p
		}
	}
	if path == "" {
		t.Skip("no browser: none of /usr/bin/chromium, chromium, chromium-browser, google-chrome is installed (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		bcancel()
		acancel()
		cancel()
	})
	if err := chromedp.Do(bctx); err != nil { // start it with bctx, not with a shorter context of one step
		t.Fatalf("start %s: %v", path, err)
	}
	return bctx
}

// openHTML opens file from disk and waits until the page says it is
// ready: the selector ready matches, or the page's script failed.
func openHTML(t *testing.T, ctx context.Context, file, ready string) {
	t.Helper()
	u := url.URL{Scheme: "file", Path: file}
	openURL(t, ctx, u.String(), ready)
}

func openURL(t *testing.T, ctx context.Context, u, ready string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(ready+", body[data-error]"))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if msg := pageEval[string](t, ctx, `document.body.dataset.error || ''`); msg != "" {
		t.Fatalf("%s failed: %s", u, msg)
	}
}

func pageEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// pageScreenshot saves a PNG of the page into $TAPEDECK_ARTIFACTS, or a
// folder of the test's.
func pageScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("TAPEDECK_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func TestReplayHTMLOutlinesTheChangedLabel(t *testing.T) {
	tapePath := recordMini(t)
	page := filepath.Join(t.TempDir(), "replay.html")
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "replay", tapePath, "--html", page)
	if r.code != 1 {
		t.Fatalf("replay with a changed label: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(page); err != nil || fi.Size() == 0 {
		t.Fatalf("replay --html wrote no report: %v", err)
	}
	ctx := htmlBrowser(t)
	openHTML(t, ctx, page, "body[data-ready]")
	if n := pageEval[int](t, ctx, `document.querySelectorAll('.difference').length`); n != 1 {
		t.Errorf("%d differences shown, want 1", n)
	}
	for side, want := range map[string]string{"recorded": "Hello", "live": "Howdy"} {
		got := pageEval[[]string](t, ctx, `[...document.querySelectorAll('.difference .side-`+side+` .panel .outline')].map(e => e.dataset.path + '=' + e.textContent)`)
		if len(got) != 1 || got[0] != "tree.children[0]="+want {
			t.Errorf("outlined on the %s side: %q, want [tree.children[0]=%s]", side, got, want)
		}
	}
	if got := pageEval[string](t, ctx, `document.querySelector('.difference .side-live .panel .el-button').textContent`); got != "Go" {
		t.Errorf("replayed panel's button says %q, want Go", got)
	}
	if pageEval[bool](t, ctx, `document.querySelector('.difference .side-live .panel .el-button').classList.contains('outline')`) {
		t.Error("the unchanged button is outlined")
	}
	pageScreenshot(t, ctx, "e2e-replay")
}

func TestTestHTMLWritesAReportPerTapeAndAnIndex(t *testing.T) {
	tapePath := recordMini(t)
	out := filepath.Join(t.TempDir(), "reports")
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini"}, "test", filepath.Dir(tapePath), "--html", out)
	if r.code != 0 {
		t.Fatalf("test: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"index.html", "mini.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Fatalf("test --html: %v", err)
		}
	}
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), `<a href="mini.html">`) || !strings.Contains(string(index), "1 passed, 0 failed") {
		t.Errorf("index.html does not link mini.html under the summary:\n%s", index)
	}
	ctx := htmlBrowser(t)
	openHTML(t, ctx, filepath.Join(out, "index.html"), "table.index-table")
	pageScreenshot(t, ctx, "e2e-test-index")
	openURL(t, ctx, pageEval[string](t, ctx, `document.querySelector('a[href="mini.html"]').href`), "body[data-ready]")
	if got := pageEval[string](t, ctx, `document.querySelector('.verdict').textContent`); got != "same" {
		t.Errorf("mini.html's verdict is %q, want same", got)
	}
	pageScreenshot(t, ctx, "e2e-test-report")
}

func TestSessionHTMLDrawsThePanels(t *testing.T) {
	src, err := readTapeFile(filepath.Join("testdata", "tapes", "hello-python.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "session.html")
	if err := writeSessionHTML(page, src.meta, src.frames); err != nil {
		t.Fatal(err)
	}
	ctx := htmlBrowser(t)
	openHTML(t, ctx, page, "body[data-ready]")
	labels := pageEval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .moment .panel .el-button')].map(b => b.textContent)`)
	if !strings.Contains(strings.Join(labels, ","), "Greet") {
		t.Errorf("the panel at the end has buttons %q, want Greet among them", labels)
	}
	pageScreenshot(t, ctx, "e2e-session")
}

// TestShowHTMLMarksFindings writes a session's report with the real binary
// (show --html) and checks that the frame the host would drop is marked.
func TestShowHTMLMarksFindings(t *testing.T) {
	store := t.TempDir()
	input := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"plugin":{"id":"mini"}}}
{"jsonrpc":"2.0","method":"panel/open","params":{}}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"go","event":"click"}}
{"jsonrpc":"2.0","method":"shutdown","params":{}}
`)
	if r := recordFixture(t, store, "mini", input, "FIXTURE_EXTRA=1"); r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	page := filepath.Join(t.TempDir(), "show.html")
	if r := tapedeck(t, store, nil, nil, "show", "last", "--html", page); r.code != 0 {
		t.Fatalf("show --html: exit %d: %s", r.code, r.stderr)
	}
	if r := tapedeck(t, store, nil, nil, "show", "last", "--html", page, "--json"); r.code != 2 {
		t.Errorf("show --html --json: exit %d, want 2", r.code)
	}
	ctx := htmlBrowser(t)
	openHTML(t, ctx, page, "body[data-ready]")
	marks := pageEval[int](t, ctx, `document.querySelectorAll('.finding-mark.level-error').length`)
	if marks == 0 {
		t.Error("no frame is marked with an error finding (notify-dropped)")
	}
	labels := pageEval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .moment .panel .el-button')].map(b => b.textContent)`)
	if !strings.Contains(strings.Join(labels, ","), "Go") {
		t.Errorf("the panel at the end has buttons %q, want Go", labels)
	}
	pageScreenshot(t, ctx, "e2e-show")
}

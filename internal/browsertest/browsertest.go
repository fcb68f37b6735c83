// Package browsertest owns driving a headless Chromium from Go tests
// (chromedp): finding the browser, starting it the way this sandboxed,
// network-less machine needs, opening a page from disk and waiting until it
// says it is ready, evaluating expressions and saving screenshots. Only
// tests import it; a test whose machine has no browser is skipped with the
// reason.
package browsertest

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Find is the Chromium (or Chrome) to drive, "" when there is none.
func Find() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a headless browser for the test and returns its context,
// which lives until the test ends. It skips the test, saying why, when no
// browser is installed.
func Start(t testing.TB) context.Context {
	t.Helper()
	path := Find()
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
		// No network here: without these Chromium keeps trying to reach out.
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

// Tab opens a new tab of the browser bctx; it closes when the test ends.
func Tab(t testing.TB, bctx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // open the tab with ctx, not with a wait's shorter context
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// OpenFile opens file from disk in ctx's tab; see Open.
func OpenFile(t testing.TB, ctx context.Context, file, ready string) {
	t.Helper()
	u := url.URL{Scheme: "file", Path: file}
	Open(t, ctx, u.String(), ready)
}

// Open navigates ctx's tab to u and waits until the selector ready matches
// or the page reports an error (body[data-error]), which fails the test.
func Open(t testing.TB, ctx context.Context, u, ready string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(ready+", body[data-error]"))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if msg := Eval[string](t, ctx, `document.body.dataset.error || ''`); msg != "" {
		t.Fatalf("%s failed: %s", u, msg)
	}
}

// Eval evaluates expr in ctx's page and returns its value.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Artifacts is where screenshots go: $TAPEDECK_ARTIFACTS, else a folder
// that lives as long as the test.
func Artifacts(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TAPEDECK_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// Screenshot saves a PNG of ctx's page as name.png in Artifacts.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(Artifacts(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

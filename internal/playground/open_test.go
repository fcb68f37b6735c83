package playground

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// openWithFakeBrowser runs the playground with Browser set to a script
// that writes its arguments, one a line, into a FIFO, and returns the
// playground and those arguments (reading the FIFO waits for exactly that
// write).
func openWithFakeBrowser(t *testing.T) (*playing, []string) {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "args")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() { b, _ := os.ReadFile(fifo); got <- b }()
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+fifo+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := play(t, copyPlugin(t, "widgets-node"), func(o *Options) { o.Browser = []string{browser, "--new-window"} })
	select {
	case b := <-got:
		return p, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	case <-time.After(30 * time.Second):
		os.WriteFile(fifo, nil, 0o600) // ends the reader
		<-got
		t.Fatalf("the browser was not started within 30 s\n%s", p.log)
	}
	return nil, nil
}

// TestOpenPutsNoTokenOnACommandLine: the browser --open starts is given
// the file:// URL of a page that only this user may read (0600, in a
// folder only this user may enter) and that leads on to the playground's
// URL. The token is on no command line: any user of this machine reads
// those (/proc/PID/cmdline), and the token gives the playground to whoever
// has it. (Before, the browser was started with the URL and its token.)
func TestOpenPutsNoTokenOnACommandLine(t *testing.T) {
	needNode(t)
	p, args := openWithFakeBrowser(t)
	u, _ := url.Parse(p.url)
	token := u.Query().Get("token")
	if len(args) != 2 || args[0] != "--new-window" {
		t.Fatalf("the browser was started with %q, want --new-window and one URL", args)
	}
	if strings.Contains(args[1], token) {
		t.Fatalf("the browser's command line holds the token: %q", args)
	}
	f, err := url.Parse(args[1])
	if err != nil || f.Scheme != "file" || !filepath.IsAbs(f.Path) {
		t.Fatalf("the browser was given %q, not a file:// URL", args[1])
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{f.Path, 0o600}, {filepath.Dir(f.Path), os.ModeDir | 0o700}} {
		info, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		st := info.Sys().(*syscall.Stat_t)
		if info.Mode() != c.mode || int(st.Uid) != os.Getuid() {
			t.Errorf("%s: mode %v, owner %d; want %v and this user (%d)", c.path, info.Mode(), st.Uid, c.mode, os.Getuid())
		}
	}
	page, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<meta http-equiv="refresh" content="0;url=`+p.url+`">`) {
		t.Errorf("the page given to the browser does not lead to %s:\n%s", p.url, page)
	}
}

// drawn says the playground's page is drawn: ready, with the plugin's
// first panel.
const drawn = `location.protocol === 'http:' && document.body !== null && document.body.dataset.ready !== undefined && document.querySelector('.live-panel .panel .el-button') !== null`

// waitAcross waits until expr is true in ctx's tab (30 s at most) while
// the tab may still be going from page to page (a wait in one page fails
// when the next replaces it: it is started again in the next).
func waitAcross(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(2*time.Second)))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
}

// TestOpenLeadsTheBrowserToThePage: in a real browser, the file --open
// gives leads to the page, and the address bar then holds no token (the
// page keeps it in the tab's session storage: before, the address bar
// kept it, for anyone who sees the screen or the history). A reload
// brings the page back; a new tab at the bare address is refused and
// says where the token is.
func TestOpenLeadsTheBrowserToThePage(t *testing.T) {
	needNode(t)
	bctx := browsertest.Start(t)
	p, args := openWithFakeBrowser(t)
	u, _ := url.Parse(p.url)
	token := u.Query().Get("token")
	bare := "http://" + u.Host + "/"

	ctx := browsertest.Tab(t, bctx)
	do(t, ctx, "open the file --open gives", chromedp.Navigate(args[len(args)-1]))
	waitAcross(t, ctx, "the page, past the file", drawn)
	if href := browsertest.Eval[string](t, ctx, `location.href`); href != bare {
		t.Errorf("the address bar holds %q, want %q (no token)", href, bare)
	}
	do(t, ctx, "reload", chromedp.Reload())
	waitAcross(t, ctx, "the page again, after a reload", drawn)
	if href := browsertest.Eval[string](t, ctx, `location.href`); strings.Contains(href, token) || href != bare {
		t.Errorf("after a reload the address bar holds %q, want %q", href, bare)
	}
	do(t, ctx, "click go", chromedp.Click(chromedp.CSS(`.live-panel .el-button[data-id=go]`)))
	lastSays(t, ctx, "go click")

	other := browsertest.Tab(t, bctx)
	browsertest.Open(t, other, bare, "body[data-refused]")
	if text := browsertest.Eval[string](t, other, `document.body.textContent`); !strings.Contains(text, "open the URL tapedeck play printed") || strings.Contains(text, token) {
		t.Errorf("a new tab at the bare address says %q", text)
	}
}

package playground

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/internal/browsertest"
)

// quietPlugin reads the host's frames and says nothing.
var quietPlugin = []string{"sh", "-c", "while read -r line; do :; done"}

// TestKeepOverwritesOnlyWhenAsked: keeping a name kept before answers 409
// with the files that are there, writes nothing and leaves the session
// running; with the overwrite flag it replaces them.
func TestKeepOverwritesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := play(t, dir, func(o *Options) { o.Command = quietPlugin })
	if status, res := p.post(t, `{"do":"keep","name":"greet"}`); status != 200 {
		t.Fatalf("keep: %d %v", status, res)
	}
	tapePath := filepath.Join(dir, "tapes", "greet.jsonl")
	first, err := os.ReadFile(tapePath)
	if err != nil {
		t.Fatal(err)
	}
	status, res := p.post(t, `{"do":"keep","name":"greet"}`)
	want := "tapes/greet.jsonl, tapes/greet.host.jsonl and tapes/greet.data exist already: keep the session under another name, or overwrite"
	if status != 409 || res["error"] != want || len(res["exists"].([]any)) != 3 {
		t.Errorf("keep of a kept name: %d %v, want 409 and %q", status, res, want)
	}
	if again, _ := os.ReadFile(tapePath); !bytes.Equal(again, first) {
		t.Error("keep without the overwrite flag changed the kept tape")
	}
	if status, res := p.post(t, `{"do":"keep","name":"greet","overwrite":true}`); status != 200 {
		t.Fatalf("keep with overwrite: %d %v", status, res)
	}
	if again, _ := os.ReadFile(tapePath); bytes.Equal(again, first) {
		t.Error("keep with the overwrite flag did not replace the kept tape")
	}
}

// TestKeepRefusesATapesLinkOut: a tapes folder that is a link out of the
// plugin folder is said once as the playground starts, and Keep refuses
// it in one line, writing nothing there (the session left running);
// tapes given outside the folder (--tapes) are the person's.
func TestKeepRefusesATapesLinkOut(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "tapes")); err != nil {
		t.Fatal(err)
	}
	p := play(t, dir, func(o *Options) { o.Command = quietPlugin })
	status, res := p.post(t, `{"do":"keep","name":"greet"}`)
	msg, _ := res["error"].(string)
	if status != 400 || !strings.HasPrefix(msg, "keep: the tapes folder tapes leads out of the plugin folder, to ") || strings.Contains(msg, "\n") {
		t.Errorf("keep into a tapes link out of the folder: %d %q", status, msg)
	}
	if names, _ := os.ReadDir(outside); len(names) > 0 {
		t.Errorf("keep wrote %d files where the link leads", len(names))
	}
	if !strings.Contains(p.log.String(), "tapedeck: play: keep: the tapes folder tapes leads out of the plugin folder") {
		t.Errorf("the playground did not say so as it started:\n%s", p.log)
	}

	mine := filepath.Join(t.TempDir(), "goldens")
	q := play(t, t.TempDir(), func(o *Options) { o.Command, o.TapesDir = quietPlugin, mine })
	if status, res := q.post(t, `{"do":"keep","name":"greet"}`); status != 200 {
		t.Errorf("keep into --tapes outside the folder: %d %v", status, res)
	}
}

// TestThePageAsksBeforeOverwriting: in the page, Keep it of a name kept
// before asks the person (a confirm naming the files); no keeps the old
// tape, yes replaces it.
func TestThePageAsksBeforeOverwriting(t *testing.T) {
	pageProof(t)
	needNode(t)
	bctx := browsertest.Start(t)
	p := play(t, copyPlugin(t, "widgets-node"), nil)
	ctx := p.page(t, bctx)
	tapePath := filepath.Join(p.dir, "tapes", "clicks.jsonl")
	keep := func(answer bool) {
		t.Helper()
		js := `window.asked = ''; window.confirm = function (m) { window.asked = m; return ` + map[bool]string{true: "true", false: "false"}[answer] + `; }`
		do(t, ctx, "keep", chromedp.Evaluate[chromedp.Void](js), chromedp.SetValue(chromedp.CSS(`.keep-name`), "clicks"), chromedp.Click(chromedp.CSS(`.keep-button`)))
	}
	keep(true)
	waitFor(t, ctx, "the first keep", `document.querySelectorAll('.kept-list pre').length === 1`)
	first, err := os.ReadFile(tapePath)
	if err != nil {
		t.Fatal(err)
	}
	if asked := browsertest.Eval[string](t, ctx, `window.asked`); asked != "" {
		t.Errorf("the page asked before the first keep: %q", asked)
	}
	keep(false)
	waitFor(t, ctx, "the question", `window.asked !== ''`)
	if asked := browsertest.Eval[string](t, ctx, `window.asked`); !strings.Contains(asked, "Overwrite tapes/clicks.jsonl, tapes/clicks.host.jsonl and tapes/clicks.data?") {
		t.Errorf("the page asked %q", asked)
	}
	if again, _ := os.ReadFile(tapePath); !bytes.Equal(again, first) {
		t.Error("the tape was replaced though the person said no")
	}
	keep(true)
	waitFor(t, ctx, "the second keep", `document.querySelectorAll('.kept-list pre').length === 2`)
	if !waitUntil(10*time.Second, func() bool { again, _ := os.ReadFile(tapePath); return !bytes.Equal(again, first) }) {
		t.Error("the tape was not replaced though the person said yes")
	}
}

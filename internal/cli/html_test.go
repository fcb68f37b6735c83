package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/internal/htmlreport"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/race"
	"github.com/tapedeck/tapedeck/playback"
)

// The HTML reports end to end: written by the real binary (or, for show,
// by the function show calls), opened from disk in a headless Chromium.

// drawnByThePlainRun skips the rest of a test under the race detector
// where it would open a page the race-built command wrote: a file, which
// Chromium draws alike whatever built the command (the five such tests'
// browsers took about 20 of the race step's CPU seconds).
func drawnByThePlainRun(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("the command ran under the race detector; drawing its page is the plain run's proof")
	}
}

func TestReplayHTMLOutlinesTheChangedLabel(t *testing.T) {
	t.Parallel()
	tapePath := recordMini(t)
	page := filepath.Join(t.TempDir(), "replay.html")
	r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "replay", tapePath, "--html", page)
	if r.code != 1 {
		t.Fatalf("replay with a changed label: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(page); err != nil || fi.Size() == 0 {
		t.Fatalf("replay --html wrote no report: %v", err)
	}
	drawnByThePlainRun(t)
	ctx := browsertest.Start(t)
	browsertest.OpenFile(t, ctx, page, "body[data-ready]")
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('.difference').length`); n != 1 {
		t.Errorf("%d differences shown, want 1", n)
	}
	for side, want := range map[string]string{"recorded": "Hello", "live": "Howdy"} {
		got := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('.difference .side-`+side+` .panel .outline')].map(e => e.dataset.path + '=' + e.textContent)`)
		if len(got) != 1 || got[0] != "tree.children[0]="+want {
			t.Errorf("outlined on the %s side: %q, want [tree.children[0]=%s]", side, got, want)
		}
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('.difference .side-live .panel .el-button').textContent`); got != "Go" {
		t.Errorf("replayed panel's button says %q, want Go", got)
	}
	if browsertest.Eval[bool](t, ctx, `document.querySelector('.difference .side-live .panel .el-button').classList.contains('outline')`) {
		t.Error("the unchanged button is outlined")
	}
	browsertest.Screenshot(t, ctx, "e2e-replay")
}

func TestTestHTMLWritesAReportPerTapeAndAnIndex(t *testing.T) {
	t.Parallel()
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
	drawnByThePlainRun(t)
	ctx := browsertest.Start(t)
	browsertest.OpenFile(t, ctx, filepath.Join(out, "index.html"), "table.index-table")
	browsertest.Screenshot(t, ctx, "e2e-test-index")
	browsertest.Open(t, ctx, browsertest.Eval[string](t, ctx, `document.querySelector('a[href="mini.html"]').href`), "body[data-ready]")
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('.verdict').textContent`); got != "same" {
		t.Errorf("mini.html's verdict is %q, want same", got)
	}
	browsertest.Screenshot(t, ctx, "e2e-test-report")
}

func TestSessionHTMLDrawsThePanels(t *testing.T) {
	t.Parallel()
	src, err := playback.ReadTape(filepath.Join("testdata", "tapes", "hello-python.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "session.html")
	if err := present.SessionHTML(page, src.Meta, htmlreport.Slice(src.Frames)); err != nil {
		t.Fatal(err)
	}
	drawnByThePlainRun(t)
	ctx := browsertest.Start(t)
	browsertest.OpenFile(t, ctx, page, "body[data-ready]")
	labels := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .moment .panel .el-button')].map(b => b.textContent)`)
	if !strings.Contains(strings.Join(labels, ","), "Greet") {
		t.Errorf("the panel at the end has buttons %q, want Greet among them", labels)
	}
	browsertest.Screenshot(t, ctx, "e2e-session")
}

// TestShowHTMLMarksFindings writes a session's report with the real binary
// (show --html) and checks that the frame the host would drop is marked.
func TestShowHTMLMarksFindings(t *testing.T) {
	t.Parallel()
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
	drawnByThePlainRun(t)
	ctx := browsertest.Start(t)
	browsertest.OpenFile(t, ctx, page, "body[data-ready]")
	marks := browsertest.Eval[int](t, ctx, `document.querySelectorAll('.finding-mark.level-error').length`)
	if marks == 0 {
		t.Error("no frame is marked with an error finding (notify-dropped)")
	}
	labels := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#view-timeline .moment .panel .el-button')].map(b => b.textContent)`)
	if !strings.Contains(strings.Join(labels, ","), "Go") {
		t.Errorf("the panel at the end has buttons %q, want Go", labels)
	}
	browsertest.Screenshot(t, ctx, "e2e-show")
}

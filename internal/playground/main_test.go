package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/browsertest"
	"github.com/tapedeck/tapedeck/internal/race"
	"github.com/tapedeck/tapedeck/internal/waittest"
	"github.com/tapedeck/tapedeck/tape"
)

// TestMain runs the tests three at a time per CPU unless -parallel says
// otherwise: they wait for plugins, pages and browsers, not on the CPU.
func TestMain(m *testing.M) {
	if !waittest.PerCPU(3) {
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// pageProof skips, under the race detector, a browser test whose proof is
// what the page draws or asks: its server side (an action in, a replay
// run, frames out) runs under the detector in TestPlaygroundInABrowser
// and TestKeepItInABrowser, and the browser's own work is the same
// race-built or not (these three took 27 of the race step's CPU seconds,
// Chromium's counted). The plain run keeps each.
func pageProof(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("a proof of the page: the plain run has it (pageProof)")
	}
}

// needNode skips a test when node is not installed.
func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the widgets-node plugin cannot run")
	}
}

// copyPlugin copies a bundled plugin into a folder of the test's.
func copyPlugin(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "plugins", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// playing is a playground a test runs.
type playing struct {
	url   string
	store string
	dir   string
	log   *syncBuffer
	// end ends the playground (as Ctrl-C does) and waits until Run has
	// returned; the test's end calls it too.
	end func()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// play runs the playground on the plugin folder dir until the test ends
// (then it must end within its grace periods and a little more).
func play(t *testing.T, dir string, tweak func(*Options)) *playing {
	t.Helper()
	p := &playing{store: t.TempDir(), dir: dir, log: &syncBuffer{}}
	ready := make(chan string, 1)
	opt := &Options{Dir: dir, StoreDir: p.store, Log: p.log, Ready: func(u string) { ready <- u }}
	if tweak != nil {
		tweak(opt)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- Run(ctx, opt) }()
	select {
	case p.url = <-ready:
	case err := <-ended:
		cancel()
		t.Fatalf("the playground did not start: %v\n%s", err, p.log)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the playground did not start within 30 s")
	}
	var once sync.Once
	p.end = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-ended:
				if err != nil {
					t.Errorf("the playground ended with %v", err)
				}
			case <-time.After(termAfter + killAfter + 10*time.Second):
				t.Error("the playground did not end within its grace periods and 10 s")
			}
		})
	}
	t.Cleanup(func() {
		p.end()
		if t.Failed() {
			t.Logf("the playground's log:\n%s", p.log)
		}
	})
	return p
}

// page opens the playground in a new tab and waits until it has drawn the
// plugin's first panel.
func (p *playing) page(t *testing.T, bctx context.Context) context.Context {
	t.Helper()
	ctx := browsertest.Tab(t, bctx)
	browsertest.Open(t, ctx, p.url, "body[data-ready]")
	waitFor(t, ctx, "the first panel", `document.querySelector('.live-panel .panel .el-button') !== null`)
	return ctx
}

// waitFor waits until expr is true in the page (30 s at most).
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.body.dataset.error || '') + ' | ' + (document.querySelector('.play-status') || {}).textContent + ' | ' + ((document.querySelector('.live-panel') || {}).textContent || '')`))
		t.Fatalf("waiting for %s: %v (the page: %s)", what, err, msg)
	}
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// lastSays waits until the plugin's panel says it saw the event last.
func lastSays(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	js, _ := json.Marshal("last: " + text)
	waitFor(t, ctx, "the panel to say "+string(js), `[...document.querySelectorAll('.live-panel .el-text')].some(e => e.textContent === `+string(js)+`)`)
}

// panelSays waits until some text of the panel is text.
func panelSays(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	js, _ := json.Marshal(text)
	waitFor(t, ctx, "the panel to say "+string(js), `[...document.querySelectorAll('.live-panel .el-text')].some(e => e.textContent === `+string(js)+`)`)
}

// readTape reads a tape file.
func readTape(t *testing.T, path string) (*frame.Session, []frame.Frame) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tape.ReadFile(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.Session, f.Frames
}

// lines lists frames as "DIR RAW" (lines only, no events), for
// comparing sessions modulo timing.
func lines(frames []frame.Frame, dirs ...frame.Dir) []string {
	var out []string
	for _, f := range frames {
		if f.IsEvent() {
			continue
		}
		for _, d := range dirs {
			if f.Dir == d {
				out = append(out, f.Dir.String()+" "+string(f.Raw))
			}
		}
	}
	return out
}

func hostEvents(frames []frame.Frame) []string {
	var out []string
	for _, l := range lines(frames, frame.In) {
		if !strings.Contains(l, `"result"`) && !strings.Contains(l, `"error"`) {
			out = append(out, strings.TrimPrefix(l, "in "))
		}
	}
	return out
}

package playback_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/datafolder"
	"github.com/tapedeck/tapedeck/internal/replaytest"
	"github.com/tapedeck/tapedeck/playback"
	"github.com/tapedeck/tapedeck/tape"
)

// TestMain makes the test binary a fixture plugin when it is started as
// one (replaytest.Env).
func TestMain(m *testing.M) { replaytest.Main(m) }

// TestTheWorkspaceTravels: a language server's session whose tape carries
// the workspace it started from (NAME.data/data, the folder of
// initialize's rootUri) is replayed in a copy of it, made for each run:
// the server reads the copy (the real folder is gone), writes into it (a
// log it counts), and says the copy's file: URIs, which compare as the
// recorded ones. Ten runs at once share nothing. A tape that carries no
// workspace runs in the recorded folder, as before (a language server's
// workspace is the user's project, not the server's own).
func TestTheWorkspaceTravels(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644)
	uri := "file://" + ws
	lines := []string{
		fmt.Sprintf(`in {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":%q}}`, uri),
		`out {"jsonrpc":"2.0","id":1,"result":{"notes":"hello"}}`,
		`in {"jsonrpc":"2.0","method":"initialized","params":{}}`,
		fmt.Sprintf(`in {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"%s/notes.txt"}}}`, uri),
		fmt.Sprintf(`out {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"%s/notes.txt","opened":1}}`, uri),
		`in {"jsonrpc":"2.0","method":"exit","params":{}}`,
		"eof", "exit",
	}
	rec := replaytest.WriteTape(t, lines...)
	rec.Meta.Profile = "lsp"
	// The tape again, as an LSP session, with its workspace beside it.
	path := filepath.Join(t.TempDir(), "lsp.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tape.WriteAll(f, rec.Meta, rec.Frames); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data := datafolder.Beside(path)
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := datafolder.Copy(datafolder.DataDir(data), ws, datafolder.Carried); err != nil {
		t.Fatal(err)
	}
	if err := (&datafolder.Start{Data: ws}).Write(data); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	lsp, err := playback.ReadTape(path)
	if err != nil {
		t.Fatal(err)
	}
	env := replaytest.Env("workspace")
	var wg sync.WaitGroup
	outcomes := make([]*playback.Outcome, 10)
	for i := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = playback.Replay(context.Background(), lsp, &playback.Options{Env: env, StepTimeout: 20 * time.Second})
		}()
	}
	wg.Wait()
	for i, o := range outcomes {
		if !o.Same() {
			t.Errorf("run %d of 10 at once: %v %+v %q", i+1, o.Err, o.Diff.Differences, o.Notes)
			continue
		}
		var init string
		for _, f := range o.Run.Live {
			if f.Dir == frame.In && strings.Contains(string(f.Raw), `"initialize"`) {
				init = string(f.Raw)
			}
		}
		if strings.Contains(init, ws) || !strings.Contains(init, `"rootUri":"file:///`) {
			t.Errorf("run %d: the server was not given a copy of the workspace: %s", i+1, init)
		}
	}
	if _, err := os.Stat(ws); err == nil {
		t.Errorf("a replay wrote into the recorded workspace %s", ws)
	}
	// Without the workspace beside it, the tape runs in the recorded
	// folder as before: here, one that is gone.
	os.RemoveAll(data)
	o := playback.Replay(context.Background(), lsp, &playback.Options{Env: env})
	if o.Err != nil || o.Same() {
		t.Errorf("a tape without its workspace, the recorded one gone: %v, same %v; want it to fail (no notes.txt)", o.Err, o.Same())
	}
}

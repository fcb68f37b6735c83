package pending

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/filter"
	"github.com/tapedeck/tapedeck/internal/replaytest"
	"github.com/tapedeck/tapedeck/playback"
)

func TestMain(m *testing.M) { replaytest.Main(m) }

// TestPendingChangesAreFilesAndSummed: a pending change that is a link or
// a folder is refused, a plain one passes; a change beside no tape is a
// new tape, one beside its own copy has no differences.
func TestPendingChangesAreFilesAndSummed(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(dir, "a.jsonl")
	for _, p := range []string{tape, tape + Suffix, filepath.Join(dir, "new.jsonl") + Suffix} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "l.jsonl") + Suffix
	folder := filepath.Join(dir, "d.jsonl") + Suffix
	if err := os.Symlink(tape, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	var bad *NotAFile
	if err := Check([]string{tape + Suffix, link}); !errors.As(err, &bad) || !bad.Link || bad.Path != link {
		t.Errorf("a link: %v", err)
	}
	if err := Check([]string{folder}); !errors.As(err, &bad) || bad.Link {
		t.Errorf("a folder: %v", err)
	}
	if err := Check([]string{tape + Suffix}); err != nil {
		t.Errorf("a plain file: %v", err)
	}
	sums, err := Summarise([]string{tape + Suffix, filepath.Join(dir, "new.jsonl") + Suffix})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 || sums[0].Tape != tape || sums[0].New || sums[0].Differences != 0 || sums[0].Outcome == nil || !sums[1].New || sums[1].Outcome != nil {
		t.Errorf("summaries %+v", sums)
	}
}

// TestAnUpdateReadsTheTapeItReplayed: the update reads the tape's lines
// again, and refuses a tape that no longer holds the frames replayed.
func TestAnUpdateReadsTheTapeItReplayed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := playback.ReadTape(path)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := readLines(rec)
	if err != nil || len(tf.Lines) != len(rec.Frames) {
		t.Fatalf("the same tape: %d lines, %v; want %d", len(tf.Lines), err, len(rec.Frames))
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(append(lines[:2], lines[3:]...), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readLines(rec); err == nil || !strings.Contains(err.Error(), "changed while it was replayed") {
		t.Errorf("a tape with a line gone: %v", err)
	}
}

// TestAcceptAndRejectPending: accepting puts the change in its tape's
// place; rejecting removes the change and leaves the tape.
func TestAcceptAndRejectPending(t *testing.T) {
	dir := t.TempDir()
	tape := filepath.Join(dir, "a.jsonl")
	for p, text := range map[string]string{tape: "old", tape + Suffix: "new"} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Accept(tape + Suffix); err != nil || got != tape {
		t.Fatalf("accept: %q, %v", got, err)
	}
	if b, _ := os.ReadFile(tape); string(b) != "new" {
		t.Errorf("the tape after accepting holds %q, want the change", b)
	}
	if err := os.WriteFile(tape+Suffix, []byte("newer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Reject(tape + Suffix); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tape + Suffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the change is still there after rejecting: %v", err)
	}
	if b, _ := os.ReadFile(tape); string(b) != "new" {
		t.Errorf("rejecting changed the tape: %q", b)
	}
	if err := Reject(tape + Suffix); err == nil {
		t.Error("rejecting a change that is gone said nothing")
	}
}

// TestFiltersApplyToCompareAndNotToPending: playback.Compare filters both sides as
// a replay does; the pending update of a replay that differs keeps the
// live run's real values where a filter applied.
func TestFiltersApplyToCompareAndNotToPending(t *testing.T) {
	rec := replaytest.PromptTape(t)
	os.WriteFile(filter.ConfigPath(rec.TapePath), []byte(`{"filters":[{"regex":"\\d{4}-\\d{2}-\\d{2}T[0-9:]+Z","replacement":"[time]"}]}`), 0o644)
	other := replaytest.WriteTape(t,
		replaytest.InitIn, replaytest.InitOut, replaytest.Click("go"),
		`out {"jsonrpc":"2.0","id":1,"method":"terminal/send","params":{"text":"Summarise note 8f3k2q created 2027-01-01T00:00:00Z"}}`,
		`in {"jsonrpc":"2.0","id":1,"result":{}}`, replaytest.Shutdown, "eof", "exit")
	o, err := playback.Compare(rec, other, nil)
	if err != nil || !o.Same() || len(o.Notes) != 1 || o.Notes[0].String() != "filters applied: [time] ×2" {
		t.Fatalf("compare: %v same %v notes %q", err, o.Same(), o.Notes)
	}

	live := playback.Replay(context.Background(), rec, &playback.Options{Env: replaytest.Env("prompt", "FIXTURE_ID=zz99aa", "FIXTURE_TIME=2030-05-05T05:05:05Z")})
	if live.Err != nil || live.Same() {
		t.Fatalf("replay: %v", live.Err)
	}
	if c := live.Diff.Differences[0].Changes[0]; c.Old != `"Summarise note 8f3k2q created [time]"` || c.New != `"Summarise note zz99aa created [time]"` {
		t.Errorf("change %+v", c)
	}
	path, err := Write(live)
	if err != nil || path == "" {
		t.Fatalf("pending: %q %v", path, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "Summarise note zz99aa created 2030-05-05T05:05:05Z") || strings.Contains(string(b), "[time]") {
		t.Errorf("the pending update does not keep the real values:\n%s", b)
	}
}

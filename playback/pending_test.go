package playback

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPendingChangesAreFilesAndSummed: a pending change that is a link or
// a folder is refused, a plain one passes; a change beside no tape is a
// new tape, one beside its own copy has no differences.
func TestPendingChangesAreFilesAndSummed(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(dir, "a.jsonl")
	for _, p := range []string{tape, tape + PendingSuffix, filepath.Join(dir, "new.jsonl") + PendingSuffix} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "l.jsonl") + PendingSuffix
	folder := filepath.Join(dir, "d.jsonl") + PendingSuffix
	if err := os.Symlink(tape, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	var bad *NotAPendingFile
	if err := CheckPending([]string{tape + PendingSuffix, link}); !errors.As(err, &bad) || !bad.Link || bad.Path != link {
		t.Errorf("a link: %v", err)
	}
	if err := CheckPending([]string{folder}); !errors.As(err, &bad) || bad.Link {
		t.Errorf("a folder: %v", err)
	}
	if err := CheckPending([]string{tape + PendingSuffix}); err != nil {
		t.Errorf("a plain file: %v", err)
	}
	sums, err := SummarisePending([]string{tape + PendingSuffix, filepath.Join(dir, "new.jsonl") + PendingSuffix})
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
	data, err := os.ReadFile(filepath.Join("..", "testdata", "tapes", "hello-go.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadTape(path)
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
	for p, text := range map[string]string{tape: "old", tape + PendingSuffix: "new"} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := AcceptPending(tape + PendingSuffix); err != nil || got != tape {
		t.Fatalf("accept: %q, %v", got, err)
	}
	if b, _ := os.ReadFile(tape); string(b) != "new" {
		t.Errorf("the tape after accepting holds %q, want the change", b)
	}
	if err := os.WriteFile(tape+PendingSuffix, []byte("newer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RejectPending(tape + PendingSuffix); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tape + PendingSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the change is still there after rejecting: %v", err)
	}
	if b, _ := os.ReadFile(tape); string(b) != "new" {
		t.Errorf("rejecting changed the tape: %q", b)
	}
	if err := RejectPending(tape + PendingSuffix); err == nil {
		t.Error("rejecting a change that is gone said nothing")
	}
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/internal/pending"
)

// pendingChanges is pendingCorpus with test --update run on it: a.jsonl.new
// and b.jsonl.new pending, each one changed label.
func pendingChanges(t *testing.T) (dir string, tapes [2]string) {
	t.Helper()
	dir, tapes, _ = pendingCorpus(t)
	if r := tapedeck(t, t.TempDir(), nil, []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}, "test", "--update", dir); r.code != 0 {
		t.Fatalf("test --update: exit %d %s", r.code, r.stderr)
	}
	return dir, tapes
}

// TestReviewRefusesASymlinkedPending: a NAME.jsonl.new that is a link (to
// a file of the user's) is refused in one line before anything is read or
// renamed; the advice it gives (rm) is run as printed.
func TestReviewRefusesASymlinkedPending(t *testing.T) {
	t.Parallel()
	dir, tapes, golden := pendingCorpus(t)
	victim := filepath.Join(t.TempDir(), ".profile")
	if err := os.WriteFile(victim, golden[1], 0o600); err != nil {
		t.Fatal(err)
	}
	link := tapes[0] + ".new"
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"review", "--accept", dir}, {"review", dir}, {"review", "--list", dir}} {
		r := tapedeck(t, t.TempDir(), []byte("a\n"), nil, args...)
		lines := strings.Split(strings.TrimSpace(string(r.stderr)), "\n")
		if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], link+" is a symbolic link") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and one line naming the link", args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(tapes[0]); !bytes.Equal(got, golden[0]) {
			t.Fatalf("%q: the tape became what the link points at", args)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%q: the link was renamed or removed: %v", args, err)
		}
	}
	if got, _ := os.ReadFile(victim); !bytes.Equal(got, golden[1]) {
		t.Error("the link's target changed")
	}
	r := tapedeck(t, t.TempDir(), nil, nil, "review", dir)
	advice := regexp.MustCompile(`\((rm [^)]*)\)`).FindSubmatch(r.stderr)
	if advice == nil {
		t.Fatalf("no rm advice in %q", r.stderr)
	}
	if out, err := exec.Command("sh", "-c", string(advice[1])).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", advice[1], err, out)
	}
	if _, err := os.Lstat(link); err == nil {
		t.Errorf("%s left the link", advice[1])
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("%s removed the link's target: %v", advice[1], err)
	}
}

// TestReviewList lists what is pending, as text and as JSON lines, without
// a terminal, changing nothing (CI set or not).
func TestReviewList(t *testing.T) {
	t.Parallel()
	dir, tapes := pendingChanges(t)
	fresh := filepath.Join(dir, "fresh.jsonl.new")
	data, _ := os.ReadFile(tapes[0])
	os.WriteFile(fresh, data, 0o644)
	r := tapedeck(t, t.TempDir(), nil, []string{"CI=true"}, "review", "--list", dir)
	out := string(r.stdout)
	if r.code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("review --list: exit %d, %d lines:\n%s%s", r.code, strings.Count(out, "\n"), out, r.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tapes[0]) + ` +1 difference \(1 changed\) +` + regexp.QuoteMeta(tapes[0]+".new") + `$`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tapes[1]) + ` +1 difference \(1 changed\) +`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(filepath.Join(dir, "fresh.jsonl")) + ` +a new tape +`),
	} {
		if !want.MatchString(out) {
			t.Errorf("review --list lacks %v:\n%s", want, out)
		}
	}
	r = tapedeck(t, t.TempDir(), nil, nil, "review", "--list", "--json", dir)
	var entries []pending.Summary
	sc := bufio.NewScanner(bytes.NewReader(r.stdout))
	for sc.Scan() {
		var e pending.Summary
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	if r.code != 0 || len(entries) != 3 {
		t.Fatalf("review --list --json: exit %d, %d entries:\n%s", r.code, len(entries), r.stdout)
	}
	byTape := map[string]pending.Summary{}
	for _, e := range entries {
		byTape[e.Tape] = e
	}
	if e := byTape[tapes[0]]; e.Pending != tapes[0]+".new" || e.New || e.Differences != 1 || e.Kinds["changed"] != 1 {
		t.Errorf("entry of %s: %+v", tapes[0], e)
	}
	if e := byTape[filepath.Join(dir, "fresh.jsonl")]; !e.New || e.Differences != 0 {
		t.Errorf("entry of the new tape: %+v", e)
	}
	for _, p := range []string{tapes[0] + ".new", tapes[1] + ".new", fresh} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("--list changed %s: %v", p, err)
		}
	}
	if r := tapedeck(t, t.TempDir(), nil, nil, "review", "--json", dir); r.code != 2 {
		t.Errorf("review --json without --list: exit %d, want 2", r.code)
	}
}

// TestReviewDiffThroughThePager: on a terminal d shows the textconv diff
// of the tape and its change through $PAGER (here a script that keeps what
// it is given); without a terminal it is written out.
func TestReviewDiffThroughThePager(t *testing.T) {
	t.Parallel()
	dir, tapes := pendingChanges(t)
	paged := filepath.Join(t.TempDir(), "paged")
	pager := filepath.Join(t.TempDir(), "pager")
	if err := os.WriteFile(pager, []byte("#!/bin/sh\ncat > '"+paged+"'\necho PAGER-RAN\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, s, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd := exec.Command(tapedeckBin, "--store", t.TempDir(), "review", dir)
	cmd.Env = append(withoutEnv(os.Environ(), "CI"), "TERM=dumb", "PAGER="+pager)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	seen := make(chan string, 64)
	go func() { // ends with EIO once the child is gone
		defer close(seen)
		br := bufio.NewReader(m)
		var all []byte
		for {
			b, err := br.ReadByte()
			if err != nil {
				return
			}
			all = append(all, b)
			if bytes.HasSuffix(all, []byte("q quit: ")) {
				seen <- string(all)
				all = nil
			}
		}
	}()
	for _, key := range []string{"d", "q"} {
		select {
		case _, ok := <-seen:
			if !ok {
				t.Fatal("review ended before asking")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no prompt within 30 s")
		}
		m.Write([]byte(key))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("review: %v", err)
	}
	m.Close()
	for range seen {
	}
	got, err := os.ReadFile(paged)
	if err != nil {
		t.Fatalf("the pager was not run: %v", err)
	}
	checkPrettyDiff(t, string(got), tapes[0])

	// No terminal: the same diff on stdout, no pager.
	r := tapedeck(t, t.TempDir(), []byte("d\nq\n"), []string{"PAGER=" + pager}, "review", dir)
	if r.code != 0 || strings.Contains(string(r.stdout), "PAGER-RAN") {
		t.Fatalf("review without a terminal: exit %d\n%s", r.code, r.stdout)
	}
	checkPrettyDiff(t, string(r.stdout), tapes[0])
}

// checkPrettyDiff: the diff of a one-label change is textconv's blocks, the
// label on a -/+ pair.
func checkPrettyDiff(t *testing.T, got, tape string) {
	t.Helper()
	for _, want := range []string{"--- " + tape + "\n", "+++ " + tape + ".new\n", "-          \"text\": \"Hello\",\n", "+          \"text\": \"Howdy\",\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"seq":`) {
		t.Errorf("the diff is of the raw lines:\n%s", got)
	}
}

// TestReadmeReviewList runs the README's review --list lines as shown, in
// a folder whose tapes/ holds a pending change.
func TestReadmeReviewList(t *testing.T) {
	t.Parallel()
	dir, tapes := pendingChanges(t)
	work := filepath.Dir(dir)
	if err := os.Rename(dir, filepath.Join(work, "tapes")); err != nil {
		t.Fatal(err)
	}
	lines := readmeBlock(t, "`review --list` says what is pending")
	if len(lines) != 2 {
		t.Fatalf("README's review --list block: %q", lines)
	}
	for _, l := range lines {
		args, ok := strings.CutPrefix(l, "tapedeck ")
		if !ok {
			t.Fatalf("README line %q does not run tapedeck", l)
		}
		r := tapedeckIn(t, work, t.TempDir(), nil, strings.Fields(args)...)
		name := filepath.Join("tapes", filepath.Base(tapes[0]))
		if r.code != 0 || !strings.Contains(string(r.stdout), name) {
			t.Errorf("%s: exit %d, stdout %q, want %s listed", l, r.code, r.stdout, name)
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// asPrinted runs a command line tapedeck printed as advice exactly as it
// stands, through sh, in dir, with the binary on PATH, the store in
// $TAPEDECK_STORE and stdin given; it fails the test when the line does not
// exit 0 and returns what it printed.
func asPrinted(t *testing.T, dir, store, line string, stdin string, env ...string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "TAPEDECK_STORE="+store)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the advice %q, run as printed: %v\n%s", line, err, out)
	}
	return string(out)
}

// hint is the command line after prefix in out (to the end of its line).
func hint(t *testing.T, out []byte, prefix string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(prefix) + `(.*)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no advice %q in:\n%s", prefix, out)
	}
	return strings.TrimSpace(string(m[1]))
}

// TestAdviceRunsAsPrinted: every command line tapedeck prints as advice
// runs as printed and does what it says: the accept hint of a failing
// test (test --update && review), the review line of a pending change and
// of a test that finds changes awaiting review, import's rm, and wrap's
// doctor, unwrap and "unwrap first", doctor's "wrap first".
func TestAdviceRunsAsPrinted(t *testing.T) {
	t.Parallel()
	t.Run("golden workflow", func(t *testing.T) {
		t.Parallel()
		dir, tapes, _ := pendingCorpus(t)
		store := t.TempDir()
		changed := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_LABEL=Howdy"}
		work := filepath.Dir(dir)
		rel, _ := filepath.Rel(work, dir)
		r := tapedeckIn(t, work, store, changed, "test", rel)
		if r.code != 1 {
			t.Fatalf("test of a changed plugin: exit %d\n%s", r.code, r.stdout)
		}
		// review reads its answers from stdin: "a" accepts the first.
		out := asPrinted(t, work, store, hint(t, r.stdout, "to accept these changes: "), "a\nr\n", changed...)
		if !strings.Contains(out, "accepted "+filepath.Join(rel, "a.jsonl")) || !strings.Contains(out, "rejected "+filepath.Join(rel, "b.jsonl")) {
			t.Errorf("test --update && review did not review both:\n%s", out)
		}
		if got, _ := os.ReadFile(tapes[0]); !bytes.Contains(got, []byte(`"Howdy"`)) {
			t.Errorf("the accepted tape does not hold the change")
		}
		// A pending change: the line replay --update prints, and the one
		// test prints while it is pending.
		r = tapedeckIn(t, work, store, changed, "replay", "--update", filepath.Join(rel, "b.jsonl"))
		if r.code != 0 {
			t.Fatalf("replay --update: exit %d\n%s", r.code, r.stderr)
		}
		r = tapedeckIn(t, work, store, []string{"TAPEDECK_FIXTURE=mini"}, "test", rel)
		awaiting := regexp.MustCompile(`awaiting review \([^)]*\): (.*)`).FindSubmatch(r.stderr)
		if awaiting == nil {
			t.Fatalf("test with a change pending says nothing of it:\n%s", r.stderr)
		}
		if out := asPrinted(t, work, store, string(awaiting[1]), "s\n"); !strings.Contains(out, "skipped "+filepath.Join(rel, "b.jsonl")) {
			t.Errorf("the awaiting-review line did not review the change:\n%s", out)
		}
		r = tapedeckIn(t, work, store, changed, "replay", "--update", filepath.Join(rel, "b.jsonl"))
		if out := asPrinted(t, work, store, hint(t, r.stderr, "accept or reject it with: "), "r\n"); !strings.Contains(out, "rejected "+filepath.Join(rel, "b.jsonl")) {
			t.Errorf("replay --update's review line did not review the change:\n%s", out)
		}
	})
	t.Run("import twice", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		tp := recordMini(t)
		if r := tapedeck(t, store, nil, nil, "import", tp); r.code != 0 {
			t.Fatalf("import: exit %d %s", r.code, r.stderr)
		}
		r := tapedeck(t, store, nil, nil, "import", tp)
		line := regexp.MustCompile(`\((tapedeck rm \S+) first`).FindSubmatch(r.stderr)
		if r.code == 0 || line == nil {
			t.Fatalf("a second import: exit %d, no rm advice:\n%s", r.code, r.stderr)
		}
		asPrinted(t, t.TempDir(), store, string(line[1]), "")
		if r := tapedeck(t, store, nil, nil, "import", tp); r.code != 0 {
			t.Errorf("import after the advised rm: exit %d %s", r.code, r.stderr)
		}
	})
	t.Run("wrap", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
		// In a folder whose name a shell would split.
		dir := filepath.Join(t.TempDir(), "my plugins", "hello-python")
		if err := os.CopyFS(dir, os.DirFS(copyPlugin(t, "hello-python"))); err != nil {
			t.Fatal(err)
		}
		store := t.TempDir()
		r := tapedeck(t, store, nil, nil, "doctor", dir)
		asPrinted(t, dir, store, strings.TrimSuffix(hint(t, r.stderr, ": run "), " first"), "")
		r = tapedeck(t, store, nil, nil, "wrap", dir)
		if r.code != 1 {
			t.Fatalf("wrap of a wrapped folder: exit %d %s", r.code, r.stderr)
		}
		unwrapFirst := hint(t, r.stderr, ": run ")
		asPrinted(t, dir, store, strings.TrimSuffix(unwrapFirst, " first"), "")
		r = tapedeck(t, store, nil, nil, "wrap", dir)
		if r.code != 0 {
			t.Fatalf("wrap after the advised unwrap: exit %d %s", r.code, r.stderr)
		}
		check, undo, ok := strings.Cut(hint(t, r.stdout, "Check with: "), "Undo with: ")
		if !ok {
			t.Fatalf("wrap's advice: %s", r.stdout)
		}
		asPrinted(t, dir, store, strings.TrimSpace(check), "")
		asPrinted(t, dir, store, strings.TrimSpace(undo), "")
	})
}

// tapedeckIn is tapedeck run from the folder dir (as a user in their
// project), through the binary.
func tapedeckIn(t *testing.T, dir, store string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tapedeckBin, append([]string{"--store", store}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.Bytes(), stderr: errb.Bytes()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

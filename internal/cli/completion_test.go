package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/present"
)

// TestCompletionAfterDashDashRunsNothing asks for completions, as a shell
// on a Tab does, with the words of another program after "--" (and after
// record's program without "--", and with the flag not last): the program
// would create a marker file. Completion runs nothing, answers nothing
// (the shell completes files) and stores nothing.
func TestCompletionAfterDashDashRunsNothing(t *testing.T) {
	t.Parallel()
	tape := filepath.Join("testdata", "tapes", "hello-go.jsonl")
	for name, words := range map[string][]string{
		"record --":             {"record", "--", "sh", "-c", "touch MARKER", ""},
		"record --name x --":    {"record", "--name", "x", "--", "sh", "-c", "touch MARKER", "-"},
		"record without --":     {"record", "sh", "-c", "touch MARKER", ""},
		"record, flag not last": {"record", "--", "sh", "-c", "touch MARKER", "", completeFlag, "more"},
		"replay TAPE --":        {"replay", tape, "--", "sh", "-c", "touch MARKER", ""},
		"replay --json TAPE --": {"replay", "--json", tape, "--", "sh", "-c", "touch MARKER", "--"},
		"shrink TAPE --":        {"shrink", tape, "--", "sh", "-c", "touch MARKER", ""},
		"test --":               {"test", "--", "sh", "-c", "touch MARKER", ""},
		"global --":             {"--", "sh", "-c", "touch MARKER", ""},
		"play --":               {"play", "--", "sh", "-c", "touch MARKER", ""},
		"play --watch --":       {"play", "--watch", "--", "sh", "-c", "touch MARKER", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "marker")
			args := append([]string(nil), words...)
			for i, w := range args {
				args[i] = strings.ReplaceAll(w, "MARKER", marker)
			}
			if args[len(args)-1] != "more" {
				args = append(args, completeFlag)
			}
			store := filepath.Join(dir, "store")
			r := tapedeckBinary(t, store, nil, nil, args...)
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("tapedeck %q ran the program after --", args)
			}
			if r.code != 0 || len(r.stdout) != 0 {
				t.Errorf("tapedeck %q: exit %d, stdout %q; want 0 and no candidates", args, r.code, r.stdout)
			}
			if _, err := os.Stat(store); err == nil {
				t.Errorf("tapedeck %q made a store (a session may be stored)", args)
			}
		})
	}
}

// TestCompletionBeforeDashDashStillAnswers: the words before "--" still
// complete (a flag of replay, with a program after the cursor unseen).
func TestCompletionBeforeDashDashStillAnswers(t *testing.T) {
	t.Parallel()
	r := tapedeckBinary(t, t.TempDir(), nil, nil, "replay", "--js", completeFlag)
	if r.code != 0 || !strings.Contains(string(r.stdout), "--json\n") {
		t.Errorf("replay --js: exit %d, stdout %q; want --json", r.code, r.stdout)
	}
	r = tapedeckBinary(t, t.TempDir(), nil, nil, "record", "--na", completeFlag)
	if r.code != 0 || !strings.Contains(string(r.stdout), "--name\n") {
		t.Errorf("record --na: exit %d, stdout %q; want --name", r.code, r.stdout)
	}
}

// fakeTapedeck puts a tapedeck on a PATH of its own that notes each start
// in a marker file and prints candidates; it returns the PATH and marker.
func fakeTapedeck(t *testing.T, candidates string) (path, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho \"$@\" >> '" + marker + "'\nprintf '%s\\n' '" + candidates + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "tapedeck"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), marker
}

// TestBashCompletionScriptStopsAtDashDash runs the bash script as bash
// does on a Tab, against a tapedeck that notes being run: after "--" the
// script never runs the command line (an older tapedeck would run the
// program), and a candidate holding $(…) is offered, never expanded.
func TestBashCompletionScriptStopsAtDashDash(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script, _ := completionScript("bash")
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	path, marker := fakeTapedeck(t, "s1\n$(touch${IFS}"+pwned+")")
	tab := func(words ...string) string {
		t.Helper()
		sh := script + "COMP_WORDS=(tapedeck \"$@\")\nCOMP_CWORD=$#\n_tapedeck\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", append([]string{"-c", sh, "bash"}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
		}
		return string(out)
	}
	tab("record", "--", "sh", "-c", "touch x", "")
	tab("replay", "t.jsonl", "--", "node", "")
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the bash script ran tapedeck with words after --: %q", b)
	}
	out := tab("show", "")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the bash script did not ask tapedeck before --: %v", err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the bash script expanded $(…) in a candidate")
	}
	if !strings.Contains(out, "s1\n") || !strings.Contains(out, "$(touch${IFS}") {
		t.Errorf("candidates %q, want s1 and the $(…) word as it is", out)
	}
	if out := tab("show", "s"); strings.Contains(out, "$(") {
		t.Errorf("candidates for s: %q, want only those starting with s", out)
	}
}

// TestZshFishCompletionScriptsStopAtDashDash runs the zsh and fish scripts
// where those shells are installed; the guard must be in the script.
func TestZshFishCompletionScriptsStopAtDashDash(t *testing.T) {
	t.Parallel()
	zsh, _ := completionScript("zsh")
	if !strings.Contains(zsh, "${words[(i)--]} < CURRENT") || !strings.Contains(zsh, `"${(@)words[1,CURRENT-1]}"`) {
		t.Errorf("the zsh script lacks the -- guard or quotes no words:\n%s", zsh)
	}
	fish, _ := completionScript("fish")
	if !strings.Contains(fish, "contains -- -- $words; and return") {
		t.Errorf("the fish script lacks the -- guard:\n%s", fish)
	}
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Log("zsh is not installed: its script is checked as text only")
		return
	}
	path, marker := fakeTapedeck(t, "s1")
	tab := func(words string, current int) string {
		t.Helper()
		sh := "_files() { :; }\ncompadd() { print -r -- \"${@[-1]}\"; }\ncompdef() { :; }\n" + zsh +
			fmt.Sprintf("\nwords=(%s); CURRENT=%d; _tapedeck\n", words, current)
		cmd := exec.Command("zsh", "-f", "-c", sh)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh: %v\n%s", err, out)
		}
		return string(out)
	}
	tab("tapedeck record -- sh -c x ''", 6)
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the zsh script ran tapedeck with words after --: %q", b)
	}
	tab("tapedeck 'show' ''", 3)
	if b, err := os.ReadFile(marker); err != nil || !strings.Contains(string(b), "show") {
		t.Errorf("the zsh script did not ask tapedeck before --: %q, %v", b, err)
	}
}

// TestCompletionOffersOnlyPlainNames: a session's name is a candidate only
// when a shell takes it as it is.
func TestCompletionOffersOnlyPlainNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"nightly": true, "v1.2_rc-3": true, "a/b@c": true,
		"": false, "two words": false, "$(touch x)": false, "`id`": false, "a\x1b[2Jb": false, "ab\u202ecd": false, "x;y": false,
	} {
		if got := present.PlainWord(name); got != want {
			t.Errorf("render.PlainWord(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCompletionOffersTheNewestSessions: a store of more sessions than a
// Tab offers (maxCompleted) answers "last" and the newest maxCompleted ids
// and names, not every one.
func TestCompletionOffersTheNewestSessions(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = maxCompleted + 5
	putSessions(t, store, n, func(i int) (frame.Session, []frame.Frame) {
		return fakeSession(fmt.Sprintf("s%04d", i), "p", base.Add(time.Duration(i)*time.Minute))
	})
	r := tapedeckBinary(t, store, nil, nil, "show", completeFlag)
	lines := strings.Split(strings.TrimSuffix(string(r.stdout), "\n"), "\n")
	if r.code != 0 || len(lines) != 1+2*maxCompleted || lines[0] != "last" {
		t.Fatalf("show <Tab>: exit %d, %d lines (first %q); want last and %d ids and names", r.code, len(lines), lines[0], maxCompleted)
	}
	if slices.Contains(lines, "s0004") || !slices.Contains(lines, "s0005") || !slices.Contains(lines, fmt.Sprintf("s%04d", n-1)) {
		t.Errorf("show <Tab> does not offer the newest %d sessions: %q …", maxCompleted, lines[:5])
	}
}

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests of replay --runs N -j M: the runs after the first run M at a
// time, and say what they found as if they had run one after the other.

func init() {
	// rendezvous is mini, except that with FIXTURE_RENDEZVOUS naming a
	// folder its runs first meet in pairs: the first run to start goes on
	// alone, the second waits for the third, the fourth for the fifth, …
	// Each of a pair writes its number into the other's FIFO and reads the
	// other's from its own, so it reads once both are alive at once; it
	// then writes the other's number to met-N (N its own) and goes on as
	// mini. One that has read nothing within FIXTURE_RENDEZVOUS_WAIT
	// (default 10 s) says so on stderr and exits 9 before it reads stdin.
	fixtures["rendezvous"] = func() int {
		dir := os.Getenv("FIXTURE_RENDEZVOUS")
		if dir == "" {
			return mini()
		}
		wait := 10 * time.Second
		if s := os.Getenv("FIXTURE_RENDEZVOUS_WAIT"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				fmt.Fprintln(os.Stderr, "rendezvous:", err)
				return 100
			}
			wait = d
		}
		n := 1
		for ; ; n++ { // n: this run's place in the order the runs started
			err := os.Mkdir(filepath.Join(dir, "run-"+strconv.Itoa(n)), 0o700)
			if err == nil {
				break
			}
			if !errors.Is(err, os.ErrExist) {
				fmt.Fprintln(os.Stderr, "rendezvous:", err)
				return 100
			}
		}
		if n > 1 {
			other, err := meet(dir, n, wait)
			if err != nil {
				fmt.Fprintf(os.Stderr, "rendezvous: run %d: %v\n", n, err)
				return 9
			}
			if err := os.WriteFile(filepath.Join(dir, "met-"+strconv.Itoa(n)), []byte(strconv.Itoa(other)), 0o600); err != nil {
				fmt.Fprintln(os.Stderr, "rendezvous:", err)
				return 100
			}
		}
		return mini()
	}
}

// meet is where run n of the rendezvous fixture meets its partner (n+1
// when n is even, else n-1): each writes its number into the other's FIFO
// and reads the other's number from its own, waiting at most wait. Both
// FIFOs are opened read-write, which never blocks (Linux); the data in a
// FIFO goes when the last process that has it open closes it, so a
// partner that has come and gone leaves nothing to read.
func meet(dir string, n int, wait time.Duration) (int, error) {
	partner := n + 1
	if n%2 == 1 {
		partner = n - 1
	}
	fifo := func(run int) (*os.File, error) {
		path := filepath.Join(dir, "fifo-"+strconv.Itoa(run))
		if err := syscall.Mkfifo(path, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("mkfifo: %w", err)
		}
		return os.OpenFile(path, os.O_RDWR, 0)
	}
	mine, err := fifo(n)
	if err != nil {
		return 0, err
	}
	defer mine.Close()
	theirs, err := fifo(partner)
	if err != nil {
		return 0, err
	}
	defer theirs.Close()
	if _, err := fmt.Fprintf(theirs, "%d\n", n); err != nil {
		return 0, fmt.Errorf("write to run %d: %w", partner, err)
	}
	if err := mine.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return 0, fmt.Errorf("the FIFO takes no deadline: %w", err)
	}
	line, err := bufio.NewReader(mine).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("run %d was not alive at the same time within %s: %w", partner, wait, err)
	}
	return strconv.Atoi(strings.TrimSpace(line))
}

// TestReplayRunsInParallel runs `replay TAPE --runs 3 -j 2` for real
// against the mini fixture with a nonce that differs on every run: the
// report names the first run's difference, then proposes the rule for the
// nonce, and says of the runs what `-j 1` says, one run after the other,
// and the --runs 3 that the README shows (without -j: as many at once as
// there are CPUs).
func TestReplayRunsInParallel(t *testing.T) {
	t.Parallel()
	tp := recordMini(t, "FIXTURE_NOISE=1")
	env := []string{"TAPEDECK_FIXTURE=mini", "FIXTURE_NOISE=1"}
	// report is what replay says of the first run, and of the runs.
	report := func(args ...string) (first, runs string) {
		t.Helper()
		r := tapedeck(t, t.TempDir(), nil, env, append([]string{"replay", tp}, args...)...)
		if r.code != 1 {
			t.Fatalf("replay %s: exit %d, want 1 (the recording's nonce differs)\n%s\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		out := string(r.stdout)
		i := strings.Index(out, "\n3 runs ")
		if i < 0 {
			t.Fatalf("replay %s says nothing of its 3 runs:\n%s", strings.Join(args, " "), out)
		}
		return out[:i+1], out[i+1:]
	}
	first, runs := report("--runs", "3", "-j", "2")
	want := "3 runs differ from each other at these paths; proposed ignore rules:\n  ui/setBadge:params.nonce\n(--write-config adds them to tapedeck.json)\n"
	if runs != want {
		t.Fatalf("replay --runs 3 -j 2 says of its runs\n%s\nwant\n%s", runs, want)
	}
	if !strings.HasPrefix(first, tp+": 1 difference") || !strings.Contains(first, "params.nonce: ") {
		t.Errorf("replay --runs 3 -j 2 does not report the first run's changed nonce first:\n%s", first)
	}
	for _, args := range [][]string{{"--runs", "3", "-j", "1"}, {"--runs", "3"}, {"--runs", "3", "--jobs", "3"}} {
		if _, got := report(args...); got != runs {
			t.Errorf("replay %s says of its runs\n%s\nbut --runs 3 -j 2\n%s", strings.Join(args, " "), got, runs)
		}
	}
	// -j is for the runs of one recording; several are tapedeck test's.
	if r := tapedeck(t, t.TempDir(), nil, env, "replay", "-j", "2", tp, tp); r.code != 2 || !strings.Contains(string(r.stderr), "replay --jobs takes one recording, not 2") {
		t.Errorf("replay -j 2 of two tapes: exit %d, want 2 and a refusal\n%s", r.code, r.stderr)
	}
}

// TestReplayRunsOverlap proves that -j 2 runs two replays at once: the
// rendezvous fixture's second and third runs each wait for the other to
// be alive (a FIFO each, no sleeps), which they can only do side by side.
// With -j 1 the same runs find nobody, each within its bounded wait, so
// the test would fail, not hang, on a replay that runs them in turn.
func TestReplayRunsOverlap(t *testing.T) {
	t.Parallel()
	tp := recordMini(t)
	rendezvous := func(jobs, wait string) (string, result) {
		dir := t.TempDir()
		env := []string{"TAPEDECK_FIXTURE=rendezvous", "FIXTURE_RENDEZVOUS=" + dir, "FIXTURE_RENDEZVOUS_WAIT=" + wait}
		// A long --min-wait: a partner slow to start on a busy machine
		// must not end the wait for the first reply; a plugin that gave
		// up waiting exits, which ends every wait at once.
		return dir, tapedeck(t, t.TempDir(), nil, env, "replay", tp, "--runs", "3", "-j", jobs, "--min-wait", "30s")
	}

	dir, r := rendezvous("2", "10s")
	if r.code != 0 || !strings.Contains(string(r.stdout), "3 runs agree with each other: no noise to ignore") {
		t.Fatalf("replay --runs 3 -j 2: exit %d, want 0 and the three runs agreeing\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for n, partner := range map[int]string{2: "3", 3: "2"} {
		b, err := os.ReadFile(filepath.Join(dir, "met-"+strconv.Itoa(n)))
		if err != nil || string(b) != partner {
			t.Errorf("run %d met %q (%v), want run %s: runs 2 and 3 were not alive at once", n, b, err, partner)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run-4")); err == nil {
		t.Error("--runs 3 started a fourth run")
	}

	// One after the other, nobody meets anybody: the fixture tells the
	// two apart (a short wait: here it is sure to end in vain). The runs
	// that gave up said nothing, and the report does not call that noise
	// (nothing varied within a value): only the met- files tell.
	dir, _ = rendezvous("1", "300ms")
	for _, run := range []string{"run-2", "run-3"} {
		if _, err := os.Stat(filepath.Join(dir, run)); err != nil {
			t.Errorf("with -j 1 the runs did not all start: %v", err)
		}
	}
	if met, _ := filepath.Glob(filepath.Join(dir, "met-*")); len(met) != 0 {
		t.Errorf("with -j 1 runs met each other: %v", met)
	}
}

// TestRunsConvergeOnMadeUpMemberNames: a plugin that names a member by a
// random id at every run gets one proposed rule, for the object that holds
// such members, not one rule per name it happened to make (which never
// converged); with the rule written, the replay is the same. So does one
// that names three members by short random names (k and a number), which
// look like any member's name but come and go by many names; the names
// the recording had, absent from every run, are not listed as changes the
// runs agree on. Before, those got a rule each, and were listed.
func TestRunsConvergeOnMadeUpMemberNames(t *testing.T) {
	t.Parallel()
	for _, fixture := range []string{"randomkey", "shortkeys"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			runsConverge(t, fixture)
		})
	}
}

func runsConverge(t *testing.T, fixture string) {
	store := t.TempDir()
	if r := recordFixture(t, store, fixture, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"), "FIXTURE_X=1"); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	tp := filepath.Join(t.TempDir(), "rk.jsonl")
	if r := tapedeck(t, store, nil, nil, "export", "-o", tp, "last"); r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	env := []string{"TAPEDECK_FIXTURE=" + fixture}
	r := tapedeck(t, t.TempDir(), nil, env, "replay", tp, "--json", "--runs", "4", "--write-config")
	var out replayJSON
	if err := json.Unmarshal(r.stdout, &out); err != nil || r.code != 1 {
		t.Fatalf("replay --runs: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(out.Proposed) != 1 || out.Proposed[0] != "initialize:result.items" {
		t.Fatalf("proposed %v, want [initialize:result.items]", out.Proposed)
	}
	if len(out.Stable) != 0 {
		t.Errorf("listed as changes every run agrees on: %+v", out.Stable)
	}
	if r := tapedeck(t, t.TempDir(), nil, env, "replay", tp); r.code != 0 {
		t.Errorf("with the proposed rule written the replay still differs:\n%s", r.stdout)
	}
}

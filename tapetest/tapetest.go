// Package tapetest runs a plugin's golden tapes from the plugin's own
// go test, as `tapedeck test` runs them: one subtest per tape, skipped
// where tapedeck would skip it, failed with tapedeck's report where the
// plugin says something else now. A tape that is missing beside its host
// script is recorded on the first run (go-vcr's way), and an update
// writes the pending changes `tapedeck review` accepts (insta's way). It
// is the front-end of package playback for go test; it needs no tapedeck
// binary.
package tapetest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/capture"
	"github.com/tapedeck/tapedeck/internal/golden"
	"github.com/tapedeck/tapedeck/internal/pending"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

// ScriptSuffix ends a host script's name: NAME.host.jsonl is the host's
// side of the session whose golden tape is NAME.jsonl beside it.
const ScriptSuffix = ".host.jsonl"

// UpdateVar is the environment variable that asks Run for updates:
// TAPEDECK_UPDATE=1 go test ./... writes a pending change beside each tape
// that differs, in every package at once.
const UpdateVar = "TAPEDECK_UPDATE"

// Run replays every tape found under paths (folders are searched for
// *.jsonl; with no path, testdata/tapes) with opt (nil: the command line's
// defaults), each as a subtest of t named for the tape. A tape that could
// not be replayed fails its subtest with the reason; one that differs
// fails with the report tapedeck test prints. Run fails t when no tape is
// found, so that a misplaced folder tests nothing silently.
//
// First, each host script NAME.host.jsonl under paths whose tape
// NAME.jsonl is missing is recorded: the plugin runs as opt.Command says
// (in opt.Dir, else the test's folder), the script plays the host, and
// the session is written as NAME.jsonl the way it goes into git (relative
// to its folder, export's default redactions). Its subtest logs that it
// recorded the tape, and the tape is replayed at once.
//
// With TAPEDECK_UPDATE=1 in the environment, or a boolean flag named
// update that the test binary defines set (go test -update, for a test
// that declares it), a tape that differs gets its change written beside
// it as NAME.jsonl.new, as tapedeck test --update writes it, for tapedeck
// review to accept or reject; its subtest still fails, naming the file.
func Run(t *testing.T, opt *playback.Options, paths ...string) {
	t.Helper()
	if len(paths) == 0 {
		paths = []string{"testdata/tapes"}
	}
	recordMissing(t, opt, paths)
	tapes, err := playback.FindTapes(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) == 0 {
		t.Fatalf("no tapes under %s (a host script NAME%s there is recorded as NAME.jsonl)", strings.Join(paths, ", "), ScriptSuffix)
	}
	update := updating()
	for _, tape := range tapes {
		t.Run(tape, func(t *testing.T) {
			r := playback.RunTape(context.Background(), tape, opt)
			switch {
			case r.Skip != "":
				t.Skip(r.Skip)
			case r.Outcome.Err != nil:
				t.Fatal(r.Outcome.Err)
			case !r.Outcome.Same():
				report := Report(r.Outcome)
				if update {
					report += pendingLine(r.Outcome)
				}
				t.Error(report)
			}
		})
	}
}

// Report is o as tapedeck replay prints it: the differences, the notes
// and what drifted.
func Report(o *playback.Outcome) string {
	var b strings.Builder
	present.Outcome(&b, o)
	return b.String()
}

// updating reports whether updates are asked for: UpdateVar set to 1, or
// a boolean flag named update that the test binary defines, set.
//
// tapetest defines no flag of its own: go test ./... -update stops every
// test binary that does not define -update, and a flag tapetest defined
// at init would clash (a panic) with the update flag that many tests
// define for their own golden files. So the variable works everywhere,
// and a test's own -update flag is honoured where there is one.
func updating() bool { return updateAsked(os.Getenv, flag.Lookup) }

// updateAsked is updating with the environment and the flags given.
func updateAsked(getenv func(string) string, lookup func(string) *flag.Flag) bool {
	if getenv(UpdateVar) == "1" {
		return true
	}
	f := lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	on, ok := g.Get().(bool)
	return ok && on
}

// pendingLine writes o's change beside its tape and says where, or why
// not.
func pendingLine(o *playback.Outcome) string {
	path, err := pending.Write(o)
	switch {
	case err != nil:
		return fmt.Sprintf("\ntapetest: no pending change written: %v", err)
	case path == "":
		return "\ntapetest: no pending change written: this difference is not one an update takes"
	}
	return fmt.Sprintf("\ntapetest: wrote %s: look at it and accept or reject it with: tapedeck review %s", path, filepath.Dir(path))
}

// recordMissing records, as a subtest each, the host scripts under paths
// whose tapes are missing.
func recordMissing(t *testing.T, opt *playback.Options, paths []string) {
	t.Helper()
	for _, script := range missingTapes(t, paths) {
		tape := strings.TrimSuffix(script, ScriptSuffix) + ".jsonl"
		t.Run("record "+tape, func(t *testing.T) {
			if err := record(script, tape, opt); err != nil {
				t.Fatal(err)
			}
			t.Logf("recorded %s from its host script %s: commit it", tape, script)
		})
	}
}

// missingTapes are the host scripts under paths (folders searched, a path
// naming a script taken) with no tape beside them.
func missingTapes(t *testing.T, paths []string) []string {
	t.Helper()
	var scripts []string
	add := func(p string) {
		if strings.HasSuffix(p, ScriptSuffix) {
			if _, err := os.Stat(strings.TrimSuffix(p, ScriptSuffix) + ".jsonl"); err != nil {
				scripts = append(scripts, p)
			}
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // FindTapes says so
		}
		if !fi.IsDir() {
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				add(path)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("find host scripts in %s: %v", p, err)
		}
	}
	return scripts
}

// record runs the plugin under script, as tapedeck record --host does,
// into a store of its own, and writes the session as the golden tape.
func record(script, tapePath string, opt *playback.Options) error {
	if opt == nil || len(opt.Command) == 0 {
		return fmt.Errorf("tapetest: %s is missing, and its host script %s is here to record it: set playback.Options.Command to the plugin's command (for a Go plugin: []string{\"go\", \"run\", \".\"})", tapePath, script)
	}
	host, err := capture.ReadHostScript(script)
	if err != nil {
		return fmt.Errorf("tapetest: %w", err)
	}
	storeDir, err := os.MkdirTemp("", "tapetest-")
	if err != nil {
		return fmt.Errorf("tapetest: record %s: %w", tapePath, err)
	}
	defer os.RemoveAll(storeDir)
	name := strings.TrimSuffix(filepath.Base(tapePath), ".jsonl")
	res, err := capture.Run(context.Background(), &capture.Options{
		Command:  opt.Command,
		Dir:      opt.Dir,
		Env:      opt.Env,
		Name:     name,
		StoreDir: storeDir,
		Host:     host,
		PinClock: true, // as play's Keep it: a golden that passes at once
		Stdout:   io.Discard,
		Stderr:   io.Discard,
		Log:      io.Discard,
	})
	if err != nil {
		return fmt.Errorf("tapetest: record %s: %w", tapePath, err)
	}
	if res.StartFailure != "" {
		return fmt.Errorf("tapetest: record %s: %s", tapePath, res.StartFailure)
	}
	if f := host.Failure(); f != "" {
		return fmt.Errorf("tapetest: record %s: the host script did not run through: %s", tapePath, f)
	}
	st, _, err := store.Ready(storeDir, nil)
	if err != nil {
		return fmt.Errorf("tapetest: record %s: %w", tapePath, err)
	}
	rec, err := playback.FromStore(st, res.Session)
	if err != nil {
		return fmt.Errorf("tapetest: record %s: %w", tapePath, err)
	}
	meta := *rec.Meta
	meta.Name = name
	return golden.WriteTape(tapePath, meta, rec.Frames, st.RedactKey)
}

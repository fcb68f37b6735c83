// Package tapetest runs a plugin's golden tapes from the plugin's own
// go test, as `tapedeck test` runs them: one subtest per tape, skipped
// where tapedeck would skip it, failed with tapedeck's report where the
// plugin says something else now. It is the front-end of package playback
// for go test; it needs no tapedeck binary.
package tapetest

import (
	"context"
	"strings"
	"testing"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/playback"
)

// Run replays every tape found under paths (folders are searched for
// *.jsonl; with no path, testdata/tapes) with opt (nil: the command line's
// defaults), each as a subtest of t named for the tape. A tape that could
// not be replayed fails its subtest with the reason; one that differs
// fails with the report tapedeck test prints. Run fails t when no tape is
// found, so that a misplaced folder tests nothing silently.
func Run(t *testing.T, opt *playback.Options, paths ...string) {
	t.Helper()
	if len(paths) == 0 {
		paths = []string{"testdata/tapes"}
	}
	tapes, err := playback.FindTapes(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) == 0 {
		t.Fatalf("no tapes under %s", strings.Join(paths, ", "))
	}
	for _, tape := range tapes {
		t.Run(tape, func(t *testing.T) {
			r := playback.RunTape(context.Background(), tape, opt)
			switch {
			case r.Skip != "":
				t.Skip(r.Skip)
			case r.Outcome.Err != nil:
				t.Fatal(r.Outcome.Err)
			case !r.Outcome.Same():
				t.Error(Report(r.Outcome))
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

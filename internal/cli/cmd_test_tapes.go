package cli

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/pending"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) testCommand() *cli.Command {
	v := &replayValues{}
	return &cli.Command{
		Name:      "test",
		Usage:     "replay every tape under the paths (" + defaultTapesUsage + ") and report",
		ArgsUsage: "[PATH…]",
		Description: "Finds tapes (*.jsonl files that start as tapes), replays them in parallel\n" +
			"and prints one line per tape and a closing \"N passed, N failed\".\n" +
			"A tape whose plugin's program is not installed here is skipped; a run in\n" +
			"which every tape was skipped fails when CI is set. Without a PATH it looks\n" +
			"in tapes/ (where tapedeck play's \"Keep it\" writes) and testdata/. Each\n" +
			"replay runs in folders of its own: a copy of the tape's NAME.data/ (its\n" +
			"plugin's data folder, and each --fresh-dir folder), so that tapes run at\n" +
			"once share nothing.",
		Flags: append(v.flags(),
			v.cwdFlag("run every tape's plugin in `DIR` instead of its recorded working directory"),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "replay `N` tapes at once"},
			&cli.StringFlag{Name: "junit", Usage: "write JUnit XML to `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write an HTML report per tape and an index.html into `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per tape (JSON lines) instead of text"},
			&cli.BoolFlag{Name: "update", Usage: "write each failing tape's live run beside it as NAME.jsonl.new, for tapedeck review"},
			&cli.BoolFlag{Name: "force", Usage: "allow --update when CI is set"},
			&cli.BoolFlag{Name: "fail-on-skip", Usage: "a tape whose plugin's program is not installed fails instead of being skipped"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `K/N` of the tapes (1 ≤ K ≤ N; stable by path), to split a corpus across CI jobs"},
		),
		Action: func(c *cli.Context) error { return e.test(c, v) },
	}
}

func (e *env) test(c *cli.Context, v *replayValues) error {
	args := c.Args().Slice()
	paths, err := tapePaths(args, "test")
	if err != nil {
		return err
	}
	update, asJSON := c.Bool("update"), c.Bool("json")
	if update && e.getenv("CI") != "" && !c.Bool("force") {
		return fail(2, "refusing --update while CI is set: golden tapes change only on purpose (add --force to override)")
	}
	k, n, err := parseShard(c.String("shard"))
	ci := e.getenv("CI") != ""
	if err != nil {
		return fail(2, "%v", err)
	}
	tapes, err := playback.FindTapes(paths)
	if err != nil {
		return fail(2, "%v", err)
	}
	if len(tapes) == 0 {
		return fail(2, "no tapes under %s (a tape is a .jsonl file from tapedeck export)", escape.Text(strings.Join(paths, ", ")))
	}
	tapes = shard(tapes, k, n)
	opts, err := v.options(nil, e.environ, c.String("store"), e.redactKey(), e.stderr, true)
	if err != nil {
		return fail(2, "%v", err)
	}
	if waiting, err := pending.Find(paths); err == nil && len(waiting) > 0 && !update {
		fmt.Fprintf(e.stderr, "tapedeck: %s awaiting review (%s): %s\n",
			present.Count(int64(len(waiting)), "pending change", "pending changes"), escape.Text(strings.Join(waiting, ", ")), escape.Text(strings.TrimSpace("tapedeck review "+strings.Join(args, " "))))
	}
	progress := screen.Color(e.stderr) && len(tapes) > 1
	if progress {
		fmt.Fprintf(e.stderr, "\r\x1b[K[%d/%d] %s", 0, len(tapes), escape.Text(filepath.Base(tapes[0])))
	}
	// Each tape is reported as it ends, its HTML report and JUnit case
	// too: no outcome is kept for the end.
	var t tally
	if dir := c.String("html"); dir != "" {
		if t.html, err = present.NewHTMLSuite(dir); err != nil {
			return fail(1, "write HTML reports: %v", err)
		}
	}
	if c.String("junit") != "" {
		t.junit = &present.JUnitSuite{}
	}
	defer e.limitMemory(largestTapes(tapes, c.Int("jobs")))()
	suite := &playback.SuiteOptions{Replay: *opts, Jobs: c.Int("jobs"), FailOnSkip: c.Bool("fail-on-skip")}
	if update {
		suite.Update = writePending
	}
	err = playback.Suite(c.Context, tapes, suite, func(i int, r *playback.TapeResult) error {
		if progress {
			fmt.Fprint(e.stderr, "\r\x1b[K")
		}
		if err := e.reportTape(r, &t, asJSON, v.verbose); err != nil {
			return err
		}
		if progress && i+1 < len(tapes) {
			fmt.Fprintf(e.stderr, "\r\x1b[K[%d/%d] %s", i+1, len(tapes), escape.Text(filepath.Base(tapes[i+1])))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return e.finishTests(&t, args, asJSON, update, ci, c.String("html"), c.String("junit"))
}

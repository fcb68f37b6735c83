package cli

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/shrink"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) shrinkCommand() *cli.Command {
	v := &replayValues{}
	return &cli.Command{
		Name:      "shrink",
		Usage:     "find a smaller session that still fails the same way",
		ArgsUsage: "TAPE|SESSION [-o OUT] [-- COMMAND [ARGS…]]",
		Description: "Replays the tape, takes its first difference (method and path) as the\n" +
			"failure, and removes host steps (delta debugging) while a replay still\n" +
			"shows it: initialize and the final shutdown and stdin close stay, an\n" +
			"answer goes with the request it answers, and what the plugin said goes\n" +
			"with the step that caused it. --predicate EXPR or --exec CMD say what\n" +
			"\"fails\" means instead. Progress goes to stderr; the smallest failing tape\n" +
			"to -o (or stdout). The command after -- is as for replay.\n\n" +
			"Predicates: differs, differs(\"M\"), changed(\"M:PATH\"), missing(\"M\"),\n" +
			"extra(\"M\"), moved(\"M\"), stderr(\"RE\"), unanswered(\"M\"), signal(\"SIGTERM\"),\n" +
			"exit == N, exit != N, timedout; with !, &&, || and parentheses.\n" +
			"Exit status: 0 a failing tape was written, 1 the tape does not fail,\n" +
			"2 could not run.",
		Flags: append(v.flags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the smallest failing tape to `FILE` (default stdout)"},
			v.cwdFlag("working directory for the plugin (with a command after --)"),
			&cli.StringFlag{Name: "predicate", Usage: "a candidate fails when `EXPR` holds for its replay (see above)"},
			&cli.StringFlag{Name: "exec", Usage: "a candidate fails when `CMD`, run by sh with the candidate tape's path in $TAPE, exits 0"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "run `N` replays at once"},
			&cli.IntFlag{Name: "max-runs", Value: 400, Usage: "replay at most `N` candidates, then keep the smallest failing one found"},
		),
		BashComplete: e.complete(completeSessions),
		Action:       func(c *cli.Context) error { return e.shrink(c, v) },
	}
}

func (e *env) shrink(c *cli.Context, v *replayValues) error {
	if c.NArg() < 1 {
		return fail(2, "shrink needs a TAPE or SESSION (see tapedeck shrink --help)")
	}
	args := c.Args().Slice()
	argv := args[1:]
	if len(argv) > 0 && argv[0] != "--" {
		return fail(2, "shrink: extra argument %q: a command to run instead of the recorded one goes after --: tapedeck shrink TAPE|SESSION -- COMMAND [ARGS…]", argv[0])
	}
	if len(argv) > 0 {
		argv = argv[1:]
	}
	if c.IsSet("predicate") && c.IsSet("exec") {
		return fail(2, "shrink: --predicate and --exec do not go together; pick one")
	}
	opt := &shrink.RunOptions{Exec: c.String("exec"), Jobs: c.Int("jobs"), MaxRuns: c.Int("max-runs"), Output: c.String("output"), Stdout: e.stdout}
	if c.IsSet("predicate") {
		var err error
		if opt.Predicate, err = shrink.ParsePredicate(c.String("predicate")); err != nil {
			return fail(2, "shrink: --predicate %q: %v", c.String("predicate"), err)
		}
	}
	ro, err := v.options(argv, e.environ, c.String("store"), e.redactKey(), e.stderr, false)
	if err != nil {
		return fail(2, "%v", err)
	}
	if !c.IsSet("step-timeout") {
		ro.StepTimeout = 0 // taken from the whole replay
	}
	ro.OnStart, ro.AlwaysDrift = nil, false // -v says what runs for a replay, not for each candidate
	opt.Replay = *ro
	rec, err := playback.Load(args[0], &playback.LoadOptions{Store: func() (*store.Store, error) { return e.openStore(c.String("store")) }})
	if err != nil {
		return fail(2, "%v", err)
	}
	defer e.limitMemory(withRuns(heldBytes(rec), opt.Jobs))()
	var prog *present.ShrinkProgress
	opt.OnStart = func(s shrink.Start) {
		fmt.Fprintf(e.stderr, "tapedeck: shrink %s: %d host steps (%d kept: initialize and the ending); chasing %s\n",
			escape.Text(rec.Name), s.Steps, s.Kept, escape.Text(s.Chase))
		if s.StepTimeout > 0 {
			fmt.Fprintf(e.stderr, "tapedeck: shrink: --step-timeout %v (4 × the longest wait of the whole replay)\n", s.StepTimeout)
		}
		prog = present.NewShrinkProgress(e.stderr, s.Steps, s.Replays)
	}
	opt.Progress = func(p shrink.Progress) { prog.Update(p) }
	opt.Searched = func() { prog.End() }
	res, err := shrink.Run(c.Context, rec, opt)
	switch {
	case errors.Is(err, shrink.ErrNothingToShrink):
		return fail(1, "%v", err)
	case err != nil:
		return fail(2, "%v", err)
	}
	where := opt.Output
	if where == "" {
		where = "stdout"
	}
	fmt.Fprintf(e.stderr, "tapedeck: shrink: %d of %d host steps left after %d replays in %s (%.0f replays/min); wrote %s\n",
		res.Left, res.Steps, res.Runs, present.Duration(res.Elapsed), float64(res.Runs)/res.Elapsed.Minutes(), escape.Text(where))
	if len(res.Kept) > 0 {
		fmt.Fprintf(e.stderr, "  kept: %s\n", escape.Text(present.List(res.Kept, res.KeptMore)))
	}
	if res.Bounded {
		fmt.Fprintf(e.stderr, "tapedeck: shrink: stopped at --max-runs %d; the tape may shrink further\n", c.Int("max-runs"))
	}
	return nil
}

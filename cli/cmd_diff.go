package cli

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/diff"
)

func (e *env) diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare two recordings (sessions or tapes) without running anything",
		ArgsUsage: "A B",
		Description: "Compares what the plugin said in B with what it said in A, with the rules\n" +
			"and the output of replay (--ignore and A's tapedeck.json, --strict,\n" +
			"--compare-stderr, --json, --html). Exit status: 0 same, 1 differs,\n" +
			"2 could not read one of them.",
		Flags: append(compareFlags("A"),
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report to `FILE`"},
		),
		BashComplete: e.complete(completeSessions),
		Action:       e.diff,
	}
}

func (e *env) diff(c *cli.Context) error {
	if c.NArg() != 2 {
		return fail(2, "diff needs two recordings, A and B (tapes or sessions: id, prefix, name or last)")
	}
	a, err := e.loadSource(c, c.Args().Get(0))
	if err != nil {
		return fail(2, "diff: %v", err)
	}
	b, err := e.loadSource(c, c.Args().Get(1))
	if err != nil {
		return fail(2, "diff: %v", err)
	}
	o := &outcome{src: a, against: b}
	cfg := &config{}
	if a.tapePath != "" {
		o.cfgPath = filepath.Join(filepath.Dir(a.tapePath), configName)
		if cfg, err = readConfig(o.cfgPath); err != nil {
			return fail(2, "diff: %v", err)
		}
	}
	rules, err := ignoreRules(c.StringSlice("ignore"), cfg, o.cfgPath)
	if err != nil {
		return fail(2, "diff: %v", err)
	}
	o.dopts = diff.Options{
		Strict:        c.Bool("strict"),
		CompareStderr: c.Bool("compare-stderr"),
		Ignore:        ignoreFunc(rules),
		Names:         [2]string{"A", "B"},
	}
	o.diff = diff.Frames(a.frames, b.frames, o.dopts)
	if path := c.String("html"); path != "" {
		if err := writeReplayHTML(path, o); err != nil {
			return fail(2, "diff: %v", err)
		}
	}
	if c.Bool("json") {
		if err := writeOutcomeJSON(e.stdout, o, nil); err != nil {
			return err
		}
	} else {
		e.printOutcome(o)
	}
	if !o.same() {
		return &exitError{code: 1}
	}
	return nil
}

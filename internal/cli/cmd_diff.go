package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) diffCommand() *cli.Command {
	v := &compareValues{}
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare two recordings (sessions or tapes) without running anything",
		ArgsUsage: "A B",
		Description: "Compares what the plugin said in B with what it said in A, with the rules\n" +
			"and the output of replay (--ignore and A's tapedeck.json, --strict,\n" +
			"--compare-stderr, --json, --html). Exit status: 0 same, 1 differs,\n" +
			"2 could not read one of them.",
		Flags: append(v.flags("A"),
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report to `FILE`"},
		),
		BashComplete: e.complete(completeSessions),
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return fail(2, "diff needs two recordings, A and B (tapes or sessions: id, prefix, name or last)")
			}
			return e.diff(c.Args().Get(0), c.Args().Get(1), v.options(), c.String("store"), c.Bool("json"), c.String("html"))
		},
	}
}

func (e *env) diff(refA, refB string, opts *playback.CompareOptions, storeDir string, asJSON bool, html string) error {
	load := &playback.LoadOptions{Store: func() (*store.Store, error) { return e.openStore(storeDir) }}
	// Read as they are compared (and read again for the report): two
	// recordings of any length in bounded memory.
	a, b, err := openStreams(refA, refB, load)
	if err != nil {
		return fail(2, "diff: %v", err)
	}
	o, err := playback.CompareStreams(a, b, opts)
	if err != nil {
		return fail(2, "diff: %v", err)
	}
	if html != "" {
		if err := present.DiffHTML(html, o, a, b); err != nil {
			return fail(2, "diff: %v", err)
		}
	}
	if asJSON {
		if err := present.OutcomeJSON(e.stdout, o, nil); err != nil {
			return err
		}
	} else {
		present.Outcome(e.stdout, o)
	}
	if !o.Same() {
		return &exitError{code: 1}
	}
	return nil
}

// openStreams opens the recordings refA and refB name as streams.
func openStreams(refA, refB string, load *playback.LoadOptions) (a, b *playback.Stream, err error) {
	if a, err = playback.OpenStream(refA, load); err != nil {
		return nil, nil, err
	}
	if b, err = playback.OpenStream(refB, load); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

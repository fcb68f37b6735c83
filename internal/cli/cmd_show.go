package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a session's timeline",
		ArgsUsage: "SESSION (an id, a unique prefix, a name, or last)",
		Description: "One line per frame: sequence number, time since the start, direction\n" +
			"(→ host to plugin, ← plugin to host, ! stderr, • lifecycle event), kind,\n" +
			"method, id, the latency of each response to its request, and a one-line\n" +
			"summary of params or result. Control characters are shown escaped.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "dir", Usage: "only these directions: in, out, err, event (repeatable or comma-separated)"},
			&cli.StringFlag{Name: "method", Usage: "only frames whose method (a response: its request's) matches this `GLOB`"},
			&cli.StringSliceFlag{Name: "kind", Usage: "only these kinds: request, notification, response, error, stray, blank, stderr, event"},
			&cli.BoolFlag{Name: "raw", Usage: "print each frame's exact bytes and its newline (so --raw --dir out is what the plugin wrote)"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per frame"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "on a live session, keep printing frames as they arrive until it ends"},
			&cli.StringFlag{Name: "html", Usage: "write a self-contained HTML report of the whole session to `FILE` instead of printing"},
		},
		BashComplete: e.complete(completeSessions),
		Action:       e.show,
	}
}

func (e *env) show(c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "show needs one SESSION (an id, a unique prefix, a name, or last); see tapedeck ls")
	}
	filter, err := present.ParseFilter(c.StringSlice("dir"), c.StringSlice("kind"), c.String("method"))
	if err != nil {
		return fail(2, "show: %v", err)
	}
	if c.Bool("raw") && c.Bool("json") {
		return fail(2, "show: --raw and --json do not go together; pick one")
	}
	meta, frames, st, err := e.showSource(c.Args().First(), c.Bool("follow"), c.String("store"))
	if err != nil {
		return err
	}
	if path := c.String("html"); path != "" {
		if c.Bool("follow") || c.Bool("raw") || c.Bool("json") {
			return fail(2, "show: --html writes the whole session as a page; it does not go with --follow, --raw or --json")
		}
		if err := present.SessionHTML(path, meta, frames); err != nil {
			return fail(1, "show %s: %v", meta.ID, err)
		}
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(path))
		return nil
	}
	opts := present.TimelineOptions{
		Filter: filter,
		Raw:    c.Bool("raw"),
		JSON:   c.Bool("json"),
		Color:  screen.Color(e.stdout),
		Width:  present.SummaryWidth(e.stdout),
		Warn:   e.stderr,
	}
	if notes, err := sessionNotesOf(st, meta.ID); err == nil && len(notes) > 0 {
		var n check.SessionNotes
		if json.Unmarshal(notes, &n) == nil {
			opts.Findings = n.Findings
		}
	}
	p := present.NewTimeline(e.stdout, opts)
	p.Header(meta)
	each := p.Frame
	if c.Bool("follow") {
		err = st.Follow(c.Context, meta.ID, 0, p.Flush, each)
	} else {
		err = frames(each)
	}
	if ferr := p.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		if isBrokenPipe(err) {
			return nil // the reader (head, a pager) has had enough
		}
		return fail(1, "show %s: %v", meta.ID, err)
	}
	return nil
}

// showSource finds what show shows: a tape file (read from the file, no
// store needed; it cannot be followed) or a stored session.
func (e *env) showSource(ref string, follow bool, storeDir string) (*frame.Session, func(func(*frame.Frame) error) error, *store.Store, error) {
	fi, serr := os.Stat(ref)
	if err := playback.MissingFile(ref, serr); err != nil {
		return nil, nil, nil, fail(1, "show: %v", err)
	}
	if serr == nil && !fi.IsDir() {
		if follow {
			return nil, nil, nil, fail(2, "show: %s is a tape file; --follow is for a session still recording", ref)
		}
		s, err := playback.TapeStream(ref)
		if err != nil {
			return nil, nil, nil, fail(1, "show: %v", err)
		}
		return s.Meta, s.Each, nil, nil
	}
	st, err := e.openStore(storeDir)
	if err != nil {
		return nil, nil, nil, err
	}
	meta, err := resolveSession(st, "show", ref)
	if err != nil {
		return nil, nil, nil, err
	}
	return meta, func(fn func(*frame.Frame) error) error { return st.Frames(meta.ID, fn) }, st, nil
}

// sessionNotesOf is what a recording stored beside its frames; nothing for
// a tape (st nil).
func sessionNotesOf(st *store.Store, id string) ([]byte, error) {
	if st == nil {
		return nil, nil
	}
	return st.Notes(id)
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "report what the real host would reject, drop or punish in a session or tape",
		ArgsUsage: "SESSION|TAPE",
		Description: "Checks every frame against the protocol's rules and the host's limits and prints\n" +
			"one finding per line: the frame, its level (error: the host rejects, drops or\n" +
			"stops; warning: a documented rule is broken but tolerated; info), the rule, the\n" +
			"method, the path inside the message, and what the host does.\n" +
			"Permissions come from agentty-plugin.json in the recorded working directory\n" +
			"(a relative one is taken from the tape's folder), or from --manifest.\n" +
			"Exit status: 0 no error-level finding, 1 at least one, 2 could not check.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "one JSON array of findings"},
			&cli.StringFlag{Name: "manifest", Usage: "the plugin's manifest `FILE` (default: agentty-plugin.json in the recorded working directory)"},
		},
		BashComplete: e.complete(completeSessions),
		Action:       e.check,
	}
}

func (e *env) check(c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "check needs one SESSION (an id, a unique prefix, a name, or last) or TAPE file")
	}
	ref := c.Args().First()
	// The frames are checked as they are read, never held: a tape costs
	// what the checker keeps, not its size.
	src, err := playback.OpenStream(ref, &playback.LoadOptions{Store: func() (*store.Store, error) { return e.openStore(c.String("store")) }})
	if err != nil {
		return fail(2, "check: %v", err)
	}

	var opts check.Options
	if path := c.String("manifest"); path != "" {
		m, err := check.ReadManifest(path)
		if err != nil {
			return fail(2, "check: %v", err)
		}
		opts.Manifest = m
	} else {
		cwd := src.Meta.Cwd
		if cwd != "" && !filepath.IsAbs(cwd) && src.TapePath != "" {
			cwd = filepath.Join(filepath.Dir(src.TapePath), cwd)
		}
		opts = check.OptionsFor(cwd)
	}
	if opts.Manifest == nil || opts.Manifest.APIVersion == 0 {
		opts.APIVersion = src.Meta.APIVersion
	}

	ck := check.New(opts)
	var found []check.Finding
	if err := src.Each(func(f *frame.Frame) error { found = append(found, ck.Feed(f)...); return nil }); err != nil {
		return fail(2, "check: %v", err)
	}
	if src.Meta.Status == frame.StatusRecording {
		fmt.Fprintf(e.stderr, "tapedeck: session %s is still recording: these are the findings so far, without the end-of-session rules\n", src.Meta.ID)
	} else {
		found = append(found, ck.Finish()...)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Seq < found[j].Seq })

	if c.Bool("json") {
		if found == nil {
			found = []check.Finding{}
		}
		js, err := json.MarshalIndent(found, "", "  ")
		if err != nil {
			return fail(2, "check: %v", err)
		}
		if _, err := e.stdout.Write(append(escape.JSON(nil, js), '\n')); err != nil {
			return fail(2, "check: %v", err)
		}
	} else if err := printFindings(e.stdout, found); err != nil {
		return fail(2, "check: %v", err)
	}
	for _, f := range found {
		if f.Level == check.Error {
			return &exitError{code: 1}
		}
	}
	return nil
}

// printFindings writes one line per finding and a closing count.
func printFindings(w io.Writer, found []check.Finding) error {
	var t screen.Table
	var errs, warns, infos int
	for _, f := range found {
		switch f.Level {
		case check.Error:
			errs++
		case check.Warning:
			warns++
		default:
			infos++
		}
		seq, when := "-", "-"
		if f.Seq > 0 {
			seq = fmt.Sprintf("#%d", f.Seq)
			when = present.Duration(time.Duration(f.At))
		}
		msg := f.Message
		if f.Path != "" {
			msg = f.Path + ": " + msg
		}
		t.Row(seq, when, string(f.Level), f.Rule, present.OrDash(f.Method), escape.Text(msg))
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d %s, %d %s, %d info\n", errs, present.Plural(errs, "error"), warns, present.Plural(warns, "warning"), infos)
	return err
}

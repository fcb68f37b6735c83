package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "report what the real host would reject, drop or punish in a session or tape",
		ArgsUsage: "SESSION|TAPE",
		Description: "Checks every frame against the rules of the session's host profile (" + strings.Join(profile.Names(), ", ") + ")\n" +
			"and prints one finding per line: the frame, its level (error: the host or the\n" +
			"specification rejects, drops or stops; warning: a rule is broken but tolerated;\n" +
			"info), the rule, the method, the path inside the message, what happens, and the\n" +
			"section of the specification it comes from.\n" +
			"Agentty's permissions come from agentty-plugin.json in the recorded working\n" +
			"directory (a relative one is taken from the tape's folder), or from --manifest.\n" +
			"--rules lists every profile's rules (or --profile's) instead.\n" +
			"Exit status: 0 no error-level finding, 1 at least one, 2 could not check.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "one JSON array of findings (with --rules: of profiles and their rules)"},
			&cli.StringFlag{Name: "manifest", Usage: "the plugin's manifest `FILE` (default: agentty-plugin.json in the recorded working directory)"},
			&cli.StringFlag{Name: "profile", Usage: "check by the rules of `PROFILE` (" + strings.Join(profile.Names(), ", ") + "; default: the session's)"},
			&cli.BoolFlag{Name: "rules", Usage: "list the rules of every profile (or of --profile) and exit"},
		},
		BashComplete: e.complete(completeSessions),
		Action:       e.check,
	}
}

func (e *env) check(c *cli.Context) error {
	var named profile.Profile
	if name := c.String("profile"); name != "" {
		p, err := profile.Get(name)
		if err != nil {
			return fail(2, "check: --profile: %v", err)
		}
		named = p
	}
	if c.Bool("rules") {
		if c.NArg() != 0 {
			return fail(2, "check --rules takes no SESSION (got %q)", c.Args().First())
		}
		return e.listRules(c.Bool("json"), named)
	}
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

	p := named
	if p == nil {
		p = profile.Of(src.Meta)
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
	opts.Profile, opts.Framing = p, src.Meta.Framing

	ck := check.New(opts)
	// Every finding is counted; the first check.MaxKept are kept to be
	// shown, so that a finding in every frame costs bounded memory.
	var kept check.Kept
	if err := src.Each(func(f *frame.Frame) error { kept.Add(ck.Feed(f)...); return nil }); err != nil {
		return fail(2, "check: %v", err)
	}
	if src.Meta.Status == frame.StatusRecording {
		fmt.Fprintf(e.stderr, "tapedeck: session %s is still recording: these are the findings so far, without the end-of-session rules\n", src.Meta.ID)
	} else {
		kept.Add(ck.Finish()...)
	}
	found := kept.Sorted()
	if cut := kept.Cut(); cut != "" {
		fmt.Fprintf(e.stderr, "tapedeck: check: %s\n", cut)
	}

	if c.Bool("json") {
		if err := present.FindingsJSON(e.stdout, found); err != nil {
			return fail(2, "check: %v", err)
		}
	} else if err := present.Findings(e.stdout, found, kept.Levels); err != nil {
		return fail(2, "check: %v", err)
	}
	if kept.Levels[check.Error] > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// listRules prints the rules of every profile, or of p when it is set: a
// table of profile, rule, level and citation, each with what happens on
// the next line; or, with asJSON, one array of check.Set.
func (e *env) listRules(asJSON bool, p profile.Profile) error {
	sets := check.Sets()
	if p != nil {
		sets = []check.Set{{Profile: p.Name(), Rules: check.RulesOf(p)}}
	}
	if asJSON {
		js, err := json.MarshalIndent(sets, "", "  ")
		if err != nil {
			return fail(2, "check: %v", err)
		}
		if _, err := e.stdout.Write(append(js, '\n')); err != nil {
			return fail(2, "check: %v", err)
		}
		return nil
	}
	var t screen.Table
	for _, set := range sets {
		for _, r := range set.Rules {
			t.Row(set.Profile, r.ID, string(r.Level), r.Spec)
			t.Row("", "", "", "  "+r.Host)
		}
	}
	if _, err := t.WriteTo(e.stdout); err != nil {
		return fail(2, "check: %v", err)
	}
	return nil
}

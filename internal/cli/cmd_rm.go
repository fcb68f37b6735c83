package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/store"
)

func (e *env) rmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove sessions",
		ArgsUsage: "[SESSION…] [--older-than DURATION]",
		Description: "Removes the sessions named (an id, a unique prefix, a name, or last) and,\n" +
			"with --older-than, every session that started longer ago than DURATION\n" +
			"(90m, 36h, 7d, 2w). Sessions still recording are never removed. The\n" +
			"database file keeps its size until it is compacted (--compact, or tapedeck gc).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "remove sessions that started more than `DURATION` ago (90m, 36h, 7d, 2w)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "only say what would be removed"},
			&cli.BoolFlag{Name: "compact", Usage: "compact the database afterwards (as tapedeck gc)"},
		},
		BashComplete: e.complete(completeSessions),
		Action:       e.rm,
	}
}

// parseAge parses a duration in Go's syntax plus days (d) and weeks (w).
func parseAge(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("want a number before %q", u.suffix)
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration like 90m, 36h, 7d or 2w")
	}
	if d < 0 {
		return 0, errors.New("want a positive duration")
	}
	return d, nil
}

func (e *env) rm(c *cli.Context) error {
	older := c.String("older-than")
	if c.NArg() == 0 && older == "" {
		return fail(2, "rm needs SESSION… or --older-than DURATION")
	}
	var age time.Duration
	if older != "" {
		var err error
		if age, err = parseAge(older); err != nil {
			return fail(2, "rm: --older-than %q: %v", older, err)
		}
	}
	st, err := e.openStore(c.String("store"))
	if err != nil {
		return err
	}
	// Resolve everything first: one bad reference removes nothing.
	var doomed []store.Summary
	seen := map[string]bool{}
	add := func(s store.Summary) {
		if !seen[s.ID] {
			seen[s.ID] = true
			doomed = append(doomed, s)
		}
	}
	for _, ref := range c.Args().Slice() {
		m, err := resolveSession(st, "rm", ref)
		if err != nil {
			return err
		}
		if m.Status == frame.StatusRecording {
			return fail(1, "rm: session %s is recording; stop its plugin first (nothing was removed)", m.ID)
		}
		add(store.Summary{ID: m.ID, Name: m.Name})
	}
	if older != "" {
		list, err := st.List(nil)
		if err != nil {
			return fail(1, "rm: %v", err)
		}
		cutoff := time.Now().Add(-age)
		for _, s := range list {
			if s.Status != frame.StatusRecording && s.Started.Before(cutoff) {
				add(s)
			}
		}
	}
	verb := "removed"
	if c.Bool("dry-run") {
		verb = "would remove"
	}
	for _, s := range doomed {
		if !c.Bool("dry-run") {
			if err := st.Delete(s.ID); err != nil {
				return fail(1, "rm: %v", err)
			}
		}
		label := s.ID
		if s.Name != "" {
			label += " (" + escape.Text(s.Name) + ")"
		}
		fmt.Fprintf(e.stdout, "%s %s\n", verb, label)
	}
	if len(doomed) == 0 && older != "" {
		fmt.Fprintf(e.stderr, "tapedeck: rm: no session started more than %s ago\n", older)
	}
	if c.Bool("compact") && !c.Bool("dry-run") {
		return e.compact(st)
	}
	return nil
}

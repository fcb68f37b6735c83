package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/store"
)

// openStore opens the store named by --store and ingests what dead recorders
// left behind. A recovery failure is reported, not fatal: it never stops a
// look at what is already stored.
func (e *env) openStore(c *cli.Context) (*store.Store, error) {
	st, err := store.Open(c.String("store"), nil)
	if err != nil {
		return nil, fail(1, "%v", err)
	}
	if err := st.Recover(); err != nil {
		fmt.Fprintf(e.stderr, "tapedeck: %v\n", err)
	}
	return st, nil
}

func (e *env) lsCommand() *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list sessions, newest first",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plugin", Usage: "only sessions of this plugin `id`"},
			&cli.IntFlag{Name: "limit", Usage: "show at most `N` sessions"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON array of session objects"},
		},
		Action: e.ls,
	}
}

func (e *env) ls(c *cli.Context) error {
	if c.NArg() > 0 {
		return fail(2, "ls takes no arguments (got %q)", c.Args().First())
	}
	st, err := e.openStore(c)
	if err != nil {
		return err
	}
	list, err := st.Sessions()
	if err != nil {
		return fail(1, "%v", err)
	}
	if p := c.String("plugin"); p != "" {
		kept := list[:0]
		for _, s := range list {
			if s.Plugin.ID == p {
				kept = append(kept, s)
			}
		}
		list = kept
	}
	if n := c.Int("limit"); n > 0 && len(list) > n {
		list = list[:n]
	}
	if c.Bool("json") {
		if list == nil {
			list = []frame.Session{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLUGIN\tSTARTED\tDURATION\tIN\tOUT\tERR\tSTATUS\tEXIT")
	now := time.Now()
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n",
			s.ID, orDash(s.Name), orDash(pluginLabel(s.Plugin)),
			s.Started.Local().Format("2006-01-02 15:04:05"),
			formatDuration(s.Duration(now)),
			s.Frames.In, s.Frames.Out, s.Frames.Err, s.Status, exitLabel(s))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return sanitize(s)
}

func pluginLabel(p frame.Plugin) string {
	if p.ID == "" {
		return ""
	}
	if p.Version != "" {
		return p.ID + "@" + p.Version
	}
	return p.ID
}

func exitLabel(s frame.Session) string {
	switch {
	case s.Exit.Signal != "":
		return s.Exit.Signal
	case s.Exit.Code != nil:
		return fmt.Sprint(*s.Exit.Code)
	}
	return "-"
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// sanitize escapes control characters and terminal escapes so that text
// from a recording can never drive the user's terminal.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0xfffd:
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

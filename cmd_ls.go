package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/store"
)

// openStore opens the store named by --store and ingests what dead recorders
// left behind. A recovery failure is reported, not fatal: it never stops a
// look at what is already stored. A damaged database is: the command ends
// with one line saying so (exit 1), before anything reads it. A 0-byte
// one is named on stderr, once, and read as empty.
func (e *env) openStore(c *cli.Context) (*store.Store, error) {
	st, err := store.Open(c.String("store"), nil)
	if err != nil {
		return nil, fail(1, "%v", err)
	}
	switch err := st.Health(); {
	case errors.Is(err, store.ErrEmpty):
		fmt.Fprintf(e.stderr, "tapedeck: %v\n", err)
	case err != nil:
		return nil, fail(1, "%v", err)
	}
	if err := st.Recover(); errors.Is(err, store.ErrDamaged) {
		return nil, fail(1, "%v", firstDamage(err))
	} else if err != nil {
		fmt.Fprintf(e.stderr, "tapedeck: %v\n", err)
	}
	return st, nil
}

// firstDamage picks, from errors joined by errors.Join, the first that
// wraps store.ErrDamaged, so that one line is printed, not one per spool.
func firstDamage(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if errors.Is(e, store.ErrDamaged) {
				return e
			}
		}
	}
	return err
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
		return fail(2, "ls takes no arguments (got %q); filter with --plugin ID or --limit N", c.Args().First())
	}
	if c.Int("limit") < 0 {
		return fail(2, "ls: --limit %d: want a positive number", c.Int("limit"))
	}
	st, err := e.openStore(c)
	if err != nil {
		return err
	}
	q := &store.Query{Plugin: c.String("plugin"), Limit: c.Int("limit")}
	if c.Bool("json") {
		_, metas, err := st.ListJSON(q)
		if err == nil {
			err = writeJSONArray(e.stdout, metas)
		}
		if err != nil {
			return fail(1, "ls: %v", err)
		}
		return nil
	}
	list, err := st.List(q)
	if err != nil {
		return fail(1, "ls: %v", err)
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLUGIN\tSTARTED\tDURATION\tIN\tOUT\tERR\tSTATUS\tEXIT")
	now := time.Now()
	for i := range list {
		s := &list[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n",
			sanitize(s.ID), orDash(s.Name), orDash(pluginLabel(s.Plugin)),
			s.Started.Local().Format("2006-01-02 15:04:05"),
			formatDuration(s.Duration(now)),
			s.Frames.In, s.Frames.Out, s.Frames.Err, sanitize(s.Status), exitLabel(s.Exit))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return w.Flush()
}

// writeJSONArray writes objects (each a JSON object as stored) as one
// indented JSON array.
func writeJSONArray(out io.Writer, objects []json.RawMessage) error {
	w := bufio.NewWriterSize(out, 64<<10)
	if len(objects) == 0 {
		w.WriteString("[]\n")
		return w.Flush()
	}
	w.WriteString("[\n  ")
	var buf bytes.Buffer
	for i, o := range objects {
		if i > 0 {
			w.WriteString(",\n  ")
		}
		buf.Reset()
		if err := json.Indent(&buf, o, "  ", "  "); err != nil {
			return store.Damaged(fmt.Sprintf("the metadata of session %d of the listing does not decode: %v", i+1, err))
		}
		w.Write(jsonSafe(nil, buf.Bytes()))
	}
	w.WriteString("\n]\n")
	return w.Flush()
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

func exitLabel(e frame.Exit) string {
	switch {
	case e.Signal != "":
		return sanitize(e.Signal)
	case e.Code != nil:
		return fmt.Sprint(*e.Code)
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

// sanitize escapes what could drive the user's terminal or hide text:
// control characters (C0, DEL, C1, including ESC, so no escape sequence
// survives), bidirectional overrides and isolates, line and paragraph
// separators, and bytes that are not UTF-8 (as \xNN). Everything else is
// kept as it is.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hides(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

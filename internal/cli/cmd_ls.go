package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/screen"
	"github.com/tapedeck/tapedeck/internal/store"
)

func (e *env) lsCommand() *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list sessions, newest first",
		Description: "The PLUGIN column names the peer: an Agentty plugin as id@version; an MCP\n" +
			"or a language server as name@version with the protocol and the client in\n" +
			"brackets, \"everything@2026.8.31 (mcp 2025-06-18, client inspector@0.16.2)\".",
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
	st, err := e.openStore(c.String("store"))
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
	var t screen.Table
	t.Row("ID", "NAME", "PLUGIN", "STARTED", "DURATION", "IN", "OUT", "ERR", "STATUS", "EXIT")
	now := time.Now()
	for i := range list {
		s := &list[i]
		who := present.Peer{Plugin: s.Plugin}
		if v := s.Server; v != nil {
			who.Profile, who.Protocol, who.HostName, who.HostVersion = v.Profile, v.Protocol, v.HostName, v.HostVersion
		}
		peer := present.PeerLabel(who)
		t.Row(escape.Text(s.ID), present.OrDash(s.Name), present.OrDash(peer),
			s.Started.Local().Format("2006-01-02 15:04:05"),
			present.Duration(s.Duration(now)),
			strconv.FormatInt(s.Frames.In, 10), strconv.FormatInt(s.Frames.Out, 10), strconv.FormatInt(s.Frames.Err, 10),
			present.SessionStatus(s.Status, s.Lost), present.ExitLabel(s.Exit))
	}
	if width, ok := screen.Width(e.stdout); ok {
		// Long names and plugin labels are cut (…) to fit the terminal.
		t.Fit(width, 8, 1, 2)
	}
	if _, err := t.WriteTo(w); err != nil {
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
		w.Write(escape.JSON(nil, buf.Bytes()))
	}
	w.WriteString("\n]\n")
	return w.Flush()
}

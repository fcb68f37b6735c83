package cli

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/atomicfile"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/redact"
	"github.com/tapedeck/tapedeck/internal/store"
	"github.com/tapedeck/tapedeck/tape"
)

func (e *env) exportCommand() *cli.Command {
	red := &redactValues{}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout"},
	}
	flags = append(flags, red.flags()...)
	flags = append(flags, &cli.BoolFlag{Name: "no-default-redactions", Usage: "keep credential-like net/fetch header values, environment variables and --NAME= arguments (redacted by default)"})
	flags = append(flags, &cli.BoolFlag{Name: "relative", Usage: "with -o: write the working directory relative to the tape's folder (and program paths inside it relative to it), so the tape replays from any checkout"})
	return &cli.Command{
		Name:      "export",
		Usage:     "write a session as a tape (JSONL) for git",
		ArgsUsage: "SESSION (an id, a unique prefix, a name, or last)",
		Description: "Secrets stay home: credential-like net/fetch header values (Authorization,\n" +
			"Cookie, Set-Cookie, Proxy-Authorization, names with token, secret or key), and in\n" +
			"the header environment variables, tags and --NAME=VALUE arguments so named, are\n" +
			"replaced by a stable placeholder unless --no-default-redactions; --redact and\n" +
			"--redact-regex name more (a regex applies to the header too). stderr says what\n" +
			"was redacted.",
		Flags:        flags,
		BashComplete: e.complete(completeSessions),
		Action:       func(c *cli.Context) error { return e.export(c, red) },
	}
}

func (e *env) export(c *cli.Context, redFlags *redactValues) error {
	if c.NArg() != 1 {
		return fail(2, "export needs one SESSION (an id, a unique prefix, a name, or last); see tapedeck ls")
	}
	st, err := e.openStore(c.String("store"))
	if err != nil {
		return err
	}
	redCfg, err := redFlags.config("export", !c.Bool("no-default-redactions"))
	if err != nil {
		return err
	}
	red, err := redactor(redCfg, e.redactKey(), "export", st)
	if err != nil {
		return err
	}
	meta, err := resolveSession(st, "export", c.Args().First())
	if err != nil {
		return err
	}
	if red != nil {
		// The header's byte counts are those of the frames as written, so
		// that importing the tape gives the same header back: a first pass
		// counts the redacted bytes, a fresh redactor then writes.
		if meta.Bytes, err = redactedBytes(st, meta.ID, red); err != nil {
			return fail(1, "export %s: %v", meta.ID, err)
		}
		if red, err = redactor(redCfg, e.redactKey(), "export", st); err != nil {
			return err
		}
		red.Session(meta)
		// A replay redacts the live frames the same way before comparing.
		meta.Redaction = redact.Merge(meta.Redaction, red.Description())
	}
	if c.Bool("relative") {
		if c.String("output") == "" {
			return fail(2, "export: --relative needs -o FILE: the working directory is written relative to the tape's folder")
		}
		if err := relativize(meta, filepath.Dir(c.String("output"))); err != nil {
			return fail(1, "export %s: %v", meta.ID, err)
		}
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		tw, err := tape.NewWriter(bw, meta)
		if err != nil {
			return err
		}
		err = st.Frames(meta.ID, func(f *frame.Frame) error {
			if red != nil {
				red.Frame(f)
			}
			return tw.Write(f)
		})
		if err != nil {
			return err
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return bw.Flush()
	}
	out := c.String("output")
	if out == "" {
		if err := write(e.stdout); err != nil {
			if isBrokenPipe(err) {
				return nil
			}
			return fail(1, "export %s: %v", meta.ID, err)
		}
	} else if err := atomicfile.Write(out, write); err != nil {
		return fail(1, "export %s: %v", meta.ID, err)
	} else {
		fmt.Fprintf(e.stderr, "tapedeck: wrote %s\n", escape.Text(out))
	}
	reportRedactions(e.stderr, "export", red)
	return nil
}

// redactedBytes counts the bytes per direction of session id's frames as
// red rewrites them (a frame stored cut counts its full length, as the
// store does).
func redactedBytes(st *store.Store, id string, red *redact.Redactor) (frame.Counts, error) {
	var n frame.Counts
	err := st.Frames(id, func(f *frame.Frame) error {
		if f.IsEvent() {
			return nil
		}
		if f.Cut != nil {
			red.Line(f.Dir, f.Raw, true)
			n.Add(f.Dir, f.Cut.Len)
			return nil
		}
		n.Add(f.Dir, int64(len(red.Line(f.Dir, f.Raw, false))))
		return nil
	})
	return n, err
}

// relativize rewrites meta's working directory relative to the folder the
// tape goes to, and arguments that are paths inside that working directory
// relative to it, so a golden tape names no path of the machine it was
// recorded on. replay reads a relative working directory from the tape's
// folder.
func relativize(meta *frame.Session, tapeDir string) error {
	if meta.Cwd == "" || !filepath.IsAbs(meta.Cwd) {
		return nil
	}
	absTape, err := filepath.Abs(tapeDir)
	if err != nil {
		return fmt.Errorf("--relative: %w", err)
	}
	rel, err := filepath.Rel(absTape, meta.Cwd)
	if err != nil {
		return fmt.Errorf("--relative: %w", err)
	}
	cmd := append([]string(nil), meta.Command...)
	for i, a := range cmd {
		if r, err := filepath.Rel(meta.Cwd, a); err == nil && filepath.IsAbs(a) && !strings.HasPrefix(r, "..") {
			if i == 0 {
				r = "./" + r // a program must not be looked up on PATH
			}
			cmd[i] = r
		}
	}
	meta.Cwd, meta.Command = rel, cmd
	return nil
}

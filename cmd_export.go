package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/tape"
)

func (e *env) exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a session as a tape (JSONL) for git",
		ArgsUsage: "SESSION",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout"},
		},
		Action: e.export,
	}
}

func (e *env) export(c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "export needs one SESSION (an id, a unique prefix, a name, or last)")
	}
	st, err := e.openStore(c)
	if err != nil {
		return err
	}
	meta, err := st.Resolve(c.Args().First())
	if err != nil {
		return fail(1, "%v", err)
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		tw, err := tape.NewWriter(bw, meta)
		if err != nil {
			return err
		}
		err = st.Frames(meta.ID, func(f *frame.Frame) error { return tw.Write(f) })
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
			return fail(1, "export %s: %v", meta.ID, err)
		}
		return nil
	}
	if err := writeFileAtomic(out, write); err != nil {
		return fail(1, "export %s: %v", meta.ID, err)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in the same folder
// and renames it into place, so readers see the old file or the new one.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

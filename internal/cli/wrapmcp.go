package cli

// wrap, unwrap and doctor of an MCP client's configuration file (--mcp
// PATH): the servers it names get tapedeck in front of them.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/wrap"
)

// mcpWrap says what wrap --mcp does to the file, for a person.
type mcpWrap struct {
	path     string   // the configuration file
	servers  []string // --server: the servers to wrap (none: its one stdio server)
	tapedeck string   // this tapedeck, absolute
	store    string   // absolute
	pinClock bool
	dryRun   bool
}

// wrapMCP wraps the servers of an MCP client's configuration file and says
// what the client will run.
func wrapMCP(out io.Writer, w mcpWrap) error {
	plan, err := wrap.PrepareMCP(w.path, w.servers, wrap.Options{Tapedeck: w.tapedeck, Store: w.store, PinClock: w.pinClock})
	if err != nil {
		return fail(1, "%v", err)
	}
	c := plan.Config
	if w.dryRun {
		fmt.Fprintf(out, "wrap %s (%s's) would:\n", c.Path, c.Client)
		fmt.Fprintf(out, "  keep    it as %s\n", wrap.MCPOrigFile(c.Path))
		for _, l := range plan.Launches {
			fmt.Fprintf(out, "  run     %s as %s\n", l.Name, present.ShellJoin(l.Argv()))
		}
		fmt.Fprintln(out, "dry run: nothing changed")
		return nil
	}
	if err := plan.Apply(); err != nil {
		return fail(1, "%v", err)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "wrapped %s (%s's)\n", c.Path, c.Client)
	for _, l := range plan.Launches {
		fmt.Fprintf(tw, "  server %s\truns %s\n", l.Name, present.ShellJoin([]string{l.Tapedeck}))
		fmt.Fprintf(tw, "  \twhich records %s\n", present.ShellJoin(l.Command))
		if len(l.Env) > 0 {
			fmt.Fprintf(tw, "  \tkeeping %s with each session (tapes redact secrets)\n", strings.Join(l.Env, ", "))
		}
	}
	fmt.Fprintf(tw, "  into\t%s, sessions named after each server\n", w.store)
	tw.Flush()
	fmt.Fprintf(out, "Restart %s (or the servers from it) so that it reads the new configuration.\n", c.Client)
	q := present.ShellJoin([]string{c.Path})
	fmt.Fprintf(out, "Check with: tapedeck doctor --mcp %s    Undo with: tapedeck unwrap --mcp %s\n", q, q)
	return nil
}

// unwrapMCP restores an MCP client's configuration file.
func unwrapMCP(out io.Writer, path string, force bool) error {
	u, err := wrap.UnwrapMCP(path, force)
	if err != nil {
		return fail(1, "%v", err)
	}
	switch {
	case u.Overwrote:
		fmt.Fprintf(out, "unwrapped %s: put back as it was before wrap (--force: the edits made since are gone)\n", u.Dir)
	case u.Restored:
		fmt.Fprintf(out, "unwrapped %s: restored byte for byte\n", u.Dir)
	default:
		fmt.Fprintf(out, "unwrapped %s: it was already the original\n", u.Dir)
	}
	if u.StateKept {
		fmt.Fprintf(out, "%s/ is kept: it holds files tapedeck did not write\n", filepath.Join(filepath.Dir(u.Dir), wrap.StateDir))
	}
	return nil
}

// doctorMCP checks a wrapped MCP client's configuration file; problems go
// to errOut, one line each, and make it exit 1.
func doctorMCP(ctx context.Context, out, errOut io.Writer, path string) error {
	r, err := wrap.DoctorMCP(ctx, path, nil)
	if err != nil {
		return fail(1, "%v", err)
	}
	printChecks(out, r.Checks)
	for _, l := range r.Launches {
		fmt.Fprintf(out, "%s will run %s: %s\n", r.Client, l.Name, present.ShellJoin(l.Argv()))
	}
	problems := r.Problems()
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(errOut, "tapedeck: doctor: %s\n", p)
	}
	return fail(1, "doctor %s: %d problem(s): %s cannot record through tapedeck as it is", r.Path, len(problems), r.Client)
}

// printChecks writes doctor's checks as a table: ok or PROBLEM, what was
// checked, what was found.
func printChecks(out io.Writer, checks []wrap.Check) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, ch := range checks {
		status := "ok"
		if ch.Problem != "" {
			status = "PROBLEM"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", status, ch.What, ch.Detail)
	}
	tw.Flush()
}

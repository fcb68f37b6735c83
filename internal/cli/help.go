package cli

// The command line's help: the commands by task, switches without
// "(default: false)", and the name a mistyped command or flag was near.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// helpful sets up app's help: commands by task, quiet switches.
func helpful(app *cli.App) {
	quietDefaults(app.Flags)
	for _, c := range app.Commands {
		quietDefaults(c.Flags)
	}
	app.CustomAppHelpTemplate = appHelp(app.Commands)
}

// unknownCommand is the usage error for a command that does not exist,
// with the one it was near.
func unknownCommand(name string, cmds []*cli.Command) error {
	var names []string
	for _, cmd := range cmds {
		names = append(names, cmd.Names()...)
	}
	hint := ""
	if near := closest(name, names); near != "" {
		hint = fmt.Sprintf(": did you mean %q?", near)
	}
	return fail(2, "unknown command %q%s (see tapedeck --help)", name, hint)
}

// taskGroups groups the commands in --help by task, in this order.
var taskGroups = []struct {
	task     string
	commands []string
}{
	{"capture", []string{"record", "wrap", "unwrap", "doctor"}},
	{"look", []string{"ls", "show", "export", "import", "textconv"}},
	{"test", []string{"test", "replay", "review", "diff", "coverage"}},
	{"debug", []string{"check", "shrink", "play"}},
	{"set-up", []string{"completion", "verify", "rm", "gc"}},
}

// appHelp is the help template of the app: urfave/cli's, with the
// commands by task in taskGroups' order (its own sorts the groups by
// name). A command no group names is listed last, so none is hidden.
func appHelp(cmds []*cli.Command) string {
	byName := map[string]*cli.Command{}
	width := 0
	for _, c := range cmds {
		byName[c.Name] = c
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	listed := map[string]bool{}
	line := func(c *cli.Command) {
		fmt.Fprintf(&b, "     %-*s  %s\n", width, c.Name, c.Usage)
		listed[c.Name] = true
	}
	for _, g := range taskGroups {
		fmt.Fprintf(&b, "   %s:\n", g.task)
		for _, n := range g.commands {
			if c := byName[n]; c != nil {
				line(c)
			}
		}
	}
	for _, c := range cmds {
		if !listed[c.Name] {
			line(c)
		}
	}
	commands := strings.NewReplacer("{{", `{{"{{"}}`).Replace(b.String())
	return `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} [global options] command [command options]{{if .Version}}{{if not .HideVersion}}

VERSION:
   {{.Version}}{{end}}{{end}}

COMMANDS (tapedeck COMMAND --help for each):
` + commands + `
GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}
`
}

// quietDefaults keeps "(default: false)" off the help of switches that
// are off unless given.
func quietDefaults(flags []cli.Flag) {
	for _, f := range flags {
		if b, ok := f.(*cli.BoolFlag); ok && !b.Value {
			b.DisableDefaultText = true
		}
	}
}

// usageLine is the one line of a usage error of cmd (nil: of tapedeck
// itself, with the app's flags): what was wrong and where, then what to
// do. The flag package's two words for a flag are put as a person reads
// them: "flag provided but not defined: -pin-clok" becomes "unknown flag
// --pin-clok" with the flag it was near; "flag needs an argument: -o"
// becomes "-o needs a value: give it as -o FILE", never read as a
// missing SESSION; "invalid value "x" for flag -runs: parse error"
// becomes "--runs takes N, not "x"".
func usageLine(app *cli.App, cmd *cli.Command, err error) error {
	where, help, flags := "", "tapedeck --help", app.Flags
	if cmd != nil {
		where, help = cmd.Name+": ", "tapedeck "+cmd.Name+" --help"
		flags = append(slices.Clip(cmd.Flags), app.Flags...)
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + dashes(name) + didYouMean(flags, err)
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		value := placeholder(lookup(flags, name))
		msg = fmt.Sprintf("%s needs a value: give it as %s %s", dashes(name), dashes(name), value)
	} else if m := invalidValue.FindStringSubmatch(msg); m != nil {
		value := placeholder(lookup(flags, m[2]))
		msg = fmt.Sprintf("%s takes %s, not %s", dashes(m[2]), value, m[1])
		if m[3] != "parse error" {
			msg += " (" + m[3] + ")"
		}
	}
	return fail(2, "%s%s (see %s)", where, msg, help)
}

// dashes names a flag as it is typed: -o, --pin-clock (the flag package
// names every flag with one dash).
func dashes(name string) string {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// invalidValue is the flag package's word for a value its flag cannot
// parse: the value quoted, the flag's name, why.
var invalidValue = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]+): (.*)$`)

// placeholder is the name that f's help gives its value (the `FILE` of
// "write to `FILE`"), else its kind, else "value".
func placeholder(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		if _, rest, ok := strings.Cut(d.GetUsage(), "`"); ok {
			if name, _, ok := strings.Cut(rest, "`"); ok && name != "" {
				return name
			}
		}
	}
	switch f.(type) {
	case *cli.DurationFlag:
		return "DURATION"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *cli.Float64Flag:
		return "NUMBER"
	case *cli.BoolFlag:
		return "true or false"
	}
	return "value"
}

// didYouMean is ": did you mean --NAME?" for a usage error about a flag
// that is not one of flags but is close to one of them, else "".
func didYouMean(flags []cli.Flag, err error) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	i := strings.Index(msg, undefined)
	if i < 0 {
		return ""
	}
	given := strings.TrimLeft(msg[i+len(undefined):], "-")
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	near := closest(given, names)
	if near == "" {
		return ""
	}
	return fmt.Sprintf(": did you mean %s?", dashes(near))
}

// closest is the name of names nearest to given, when it is near enough
// to be a slip (an edit distance, a swap of two letters counting one, of
// at most a third of its length, and at least one); "" otherwise.
func closest(given string, names []string) string {
	best, bestD := "", max(1, len(given)/3)+1
	for _, n := range names {
		if d := editDistance(given, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, one each.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

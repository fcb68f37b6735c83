package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// intersperse lets flags follow positional arguments ("replay TAPE --json"),
// which urfave/cli (like the flag package) would take as arguments. For the
// command named in args it moves every flag it knows that stands after a
// positional argument, with its value, in front of the positionals. A
// literal "--" ends the flags, and commands that run another program
// (record) are left alone: everything after their first positional is the
// program's.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Skip global flags to find the command.
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if !strings.Contains(args[i], "=") && takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil || cmd.Name == "record" || len(cmd.Subcommands) > 0 {
		return args
	}
	var flags, positional []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" && known(cmd.Flags, a) {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(cmd.Flags, a) && j+1 < len(rest) {
				j++
				flags = append(flags, rest[j])
			}
			continue
		}
		positional = append(positional, a)
	}
	out := append([]string{}, args[:i+1]...)
	out = append(out, flags...)
	return append(out, positional...)
}

func flagName(a string) string {
	a = strings.TrimLeft(a, "-")
	name, _, _ := strings.Cut(a, "=")
	return name
}

func lookup(flags []cli.Flag, a string) cli.Flag {
	name := flagName(a)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func known(flags []cli.Flag, a string) bool { return lookup(flags, a) != nil }

// takesValue reports whether the flag a names needs a value argument.
func takesValue(flags []cli.Flag, a string) bool {
	f := lookup(flags, a)
	if f == nil {
		return false
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}

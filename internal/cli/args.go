package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// intersperse puts flags where urfave/cli (like the flag package) looks
// for them. For the command named in args it moves every flag it knows
// that stands after a positional argument ("replay TAPE --json"), with its
// value, in front of the positionals, and every global flag given after
// the command name ("ls --store DIR") in front of the command name. A
// literal "--" ends the flags, and for a command that runs another program
// (record) so does its first positional: the rest is the program's. A
// trailing --generate-bash-completion (a shell asking for completions)
// stays last.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var tail []string
	if args[len(args)-1] == completeFlag {
		args, tail = args[:len(args)-1], args[len(args)-1:]
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
		return append(args, tail...)
	}
	cmd := app.Command(args[i])
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(args, tail...)
	}
	var globals, flags, positional, dangling []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		isFlag := strings.HasPrefix(a, "-") && a != "-"
		if a == "--" || (!isFlag && cmd.Name == "record") {
			positional = append(positional, rest[j:]...)
			break
		}
		if !isFlag {
			positional = append(positional, a)
			continue
		}
		// A flag the command does not know and tapedeck does (--store)
		// is the global one; one neither knows goes with the command's,
		// whose parser names it.
		dst, of := &flags, cmd.Flags
		if !known(cmd.Flags, a) && known(app.Flags, a) {
			dst, of = &globals, app.Flags
		}
		if !strings.Contains(a, "=") && takesValue(of, a) && j+1 == len(rest) {
			// A last flag without its value ("export last -o") goes
			// last, with no positional after it, so that the parser says
			// the value is missing instead of taking a positional for it.
			dangling = append(dangling, a)
			continue
		}
		*dst = append(*dst, a)
		if !strings.Contains(a, "=") && takesValue(of, a) && j+1 < len(rest) {
			j++
			*dst = append(*dst, rest[j])
		}
	}
	out := append([]string{}, args[:i]...)
	out = append(out, globals...)
	out = append(out, args[i])
	out = append(out, flags...)
	if len(dangling) > 0 {
		out = append(out, dangling...)
	} else {
		out = append(out, positional...)
	}
	return append(out, tail...)
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

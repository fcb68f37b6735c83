package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func (e *env) completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell script that completes tapedeck's commands, flags and sessions",
		ArgsUsage: "bash|zsh|fish",
		Description: "Completes command names, flags, and where a command takes a SESSION, the\n" +
			"stored sessions' ids and names and last (read from --store).\n\n" +
			"Install for bash (with the bash-completion package):\n" +
			"  " + installBash + "\n" +
			"for zsh (with fpath=(~/.zfunc $fpath) in ~/.zshrc, before compinit):\n" +
			"  " + installZsh + "\n" +
			"for fish:\n" +
			"  " + installFish,
		Action: e.completion,
	}
}

// The lines that install each shell's script for the user, as completion's
// help shows them; the README shows the same commands.
const (
	installBash = "mkdir -p ~/.local/share/bash-completion/completions && tapedeck completion bash > ~/.local/share/bash-completion/completions/tapedeck"
	installZsh  = "mkdir -p ~/.zfunc && tapedeck completion zsh > ~/.zfunc/_tapedeck"
	installFish = "mkdir -p ~/.config/fish/completions && tapedeck completion fish > ~/.config/fish/completions/tapedeck.fish"
)

func (e *env) completion(c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(2, "completion needs one shell: bash, zsh or fish")
	}
	script, ok := completionScript(c.Args().First())
	if !ok {
		return fail(2, "completion: no script for %q: want bash, zsh or fish", c.Args().First())
	}
	_, err := fmt.Fprint(e.stdout, script)
	return err
}

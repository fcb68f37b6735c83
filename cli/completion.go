package cli

// Shell completion: the scripts tapedeck completion prints, and what the
// binary answers when a script asks it (urfave/cli's protocol: the words
// typed so far, then --generate-bash-completion; the scripts pass the word
// being completed too, even when it is empty).

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/store"
)

const completeFlag = "--generate-bash-completion"

// What a command's arguments complete to.
type completes int

const (
	completeNothing  completes = iota // only flags (the shell completes files)
	completeCommands                  // command names (tapedeck itself)
	completeSessions                  // stored sessions: ids, names and last
)

// complete answers a completion request: the flags that fit a word that
// starts with "-", else what the arguments take, one per line. It never
// fails and never creates a store.
func (e *env) complete(what completes) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		cur := ""
		if n := len(e.args); n >= 2 && e.args[n-1] == completeFlag {
			cur = e.args[n-2]
		}
		if strings.HasPrefix(cur, "-") {
			flags := c.App.Flags
			if what != completeCommands && c.Command != nil {
				flags = append(append([]cli.Flag(nil), c.Command.Flags...), c.App.Flags...)
			}
			for _, f := range flags {
				if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
					continue
				}
				for _, name := range f.Names() {
					dash := "--"
					if len(name) == 1 {
						dash = "-"
					}
					if strings.HasPrefix(dash+name, cur) {
						fmt.Fprintln(e.stdout, dash+name)
					}
				}
			}
			return
		}
		switch what {
		case completeCommands:
			for _, cmd := range c.App.Commands {
				if !cmd.Hidden {
					fmt.Fprintln(e.stdout, cmd.Name)
				}
			}
		case completeSessions:
			fmt.Fprintln(e.stdout, "last")
			st, err := store.Open(c.String("store"), &store.Options{MustExist: true})
			if err != nil {
				return
			}
			list, err := st.List(nil)
			if err != nil {
				return
			}
			for _, s := range list {
				fmt.Fprintln(e.stdout, s.ID)
				if s.Name != "" && !strings.ContainsAny(s.Name, "\n\r\t ") {
					fmt.Fprintln(e.stdout, s.Name)
				}
			}
		}
	}
}

// completionScript is the completion script for shell.
func completionScript(shell string) (string, bool) {
	switch shell {
	case "bash":
		return bashCompletion, true
	case "zsh":
		return zshCompletion, true
	case "fish":
		return fishCompletion, true
	}
	return "", false
}

const bashCompletion = `# bash completion for tapedeck (tapedeck completion bash)
_tapedeck() {
	local cur="${COMP_WORDS[COMP_CWORD]}"
	local IFS=$'\n'
	local opts
	opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" ` + completeFlag + ` 2>/dev/null)
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _tapedeck tapedeck
`

const zshCompletion = `#compdef tapedeck
# zsh completion for tapedeck (tapedeck completion zsh)
_tapedeck() {
	local -a opts
	opts=("${(@f)$(${words[1,CURRENT-1]} "${words[CURRENT]}" ` + completeFlag + ` 2>/dev/null)}")
	if [[ -n "${opts[1]}" ]]; then
		compadd -a opts
	else
		_files
	fi
}
if [[ "${funcstack[1]}" == "_tapedeck" ]]; then
	_tapedeck "$@"
else
	compdef _tapedeck tapedeck
fi
`

const fishCompletion = `# fish completion for tapedeck (tapedeck completion fish)
function __tapedeck_complete
	set -l words (commandline -opc)
	command $words (commandline -ct) ` + completeFlag + ` 2>/dev/null
end
complete -c tapedeck -a '(__tapedeck_complete)'
`

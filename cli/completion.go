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

// completeWord answers a completion request for the word cur: the flags
// that fit it when it starts with "-" (those of the command, or of the
// app alone for command names), else what the arguments take, one per
// line. It never fails and never creates a store.
func (e *env) completeWord(cur string, what completes, app *cli.App, cmd *cli.Command, storeDir string) {
	if strings.HasPrefix(cur, "-") {
		flags := app.Flags
		if what != completeCommands && cmd != nil {
			flags = append(append([]cli.Flag(nil), cmd.Flags...), app.Flags...)
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
		for _, c := range app.Commands {
			if !c.Hidden {
				fmt.Fprintln(e.stdout, c.Name)
			}
		}
	case completeSessions:
		fmt.Fprintln(e.stdout, "last")
		st, err := store.Open(storeDir, &store.Options{MustExist: true})
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

// wordBeingCompleted is the word a completion request completes: the one
// before --generate-bash-completion (the scripts pass it even when empty).
func (e *env) wordBeingCompleted() string {
	if n := len(e.args); n >= 2 && e.args[n-1] == completeFlag {
		return e.args[n-2]
	}
	return ""
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

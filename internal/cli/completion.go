package cli

// Shell completion: the scripts tapedeck completion prints, and what the
// binary answers when a script asks it (urfave/cli's protocol: the words
// typed so far, then --generate-bash-completion; the scripts pass the word
// being completed too, even when it is empty).

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/store"
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
		// A Tab must answer at once: a store busy with a long write is
		// waited for briefly, then the answer is "last" alone; live
		// sessions' spools are not read, only their headers; and at most
		// maxCompleted sessions are offered (the newest).
		st, err := store.Open(storeDir, &store.Options{MustExist: true, LockTimeout: completionLockWait})
		if err != nil {
			return
		}
		list, err := st.ListRefs(&store.Query{Limit: maxCompleted})
		if err != nil {
			return
		}
		for _, s := range list {
			fmt.Fprintln(e.stdout, s.ID)
			if present.PlainWord(s.Name) {
				fmt.Fprintln(e.stdout, s.Name)
			}
		}
	}
}

// How long session completion waits for a busy store, and how many
// sessions it offers at most.
const (
	completionLockWait = 100 * time.Millisecond
	maxCompleted       = 1000
)

// completeOnly answers a completion request: args holds
// --generate-bash-completion somewhere (the scripts put it last). It runs
// nothing but the completion code: urfave/cli v2 turns its completion off
// once "--" appears and would then run the command with the flag as an
// argument, so the request never reaches a command's action. The words
// before the flag are the command line so far and the word being
// completed; a word after "--" (or after the program record starts) is
// another program's, and the answer is then empty (the shell completes
// files). It always exits 0.
func (e *env) completeOnly(args []string) int {
	words := args[:slices.Index(args, completeFlag)]
	e.args = append(slices.Clone(words), completeFlag)
	app := newApp(e)
	withoutActions(app)
	if len(words) >= 2 && inProgramWords(app, words[1:len(words)-1]) {
		return 0
	}
	_ = app.Run(intersperse(app, e.args)) // errors go unsaid: a completion answers or is empty
	return 0
}

// withoutActions takes away everything app could do but complete: every
// action, before and after hook, of the app and of each command (with no
// action urfave/cli would print the help, nothing else).
func withoutActions(app *cli.App) {
	app.Action, app.Before, app.After = nil, nil, nil
	var strip func([]*cli.Command)
	strip = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.Action, c.Before, c.After = nil, nil, nil
			strip(c.Subcommands)
		}
	}
	strip(app.Commands)
}

// inProgramWords reports whether the word after before (the words typed
// after the program's name) belongs to another program: before holds
// "--", or it names record and a positional after it (record's program).
func inProgramWords(app *cli.App, before []string) bool {
	if slices.Contains(before, "--") {
		return true
	}
	i := skipFlags(app.Flags, before)
	if i >= len(before) || before[i] != "record" {
		return false
	}
	cmd := app.Command("record")
	rest := before[i+1:]
	return cmd != nil && skipFlags(cmd.Flags, rest) < len(rest)
}

// skipFlags is the index of the first word of words that is neither a
// flag of flags nor such a flag's value.
func skipFlags(flags []cli.Flag, words []string) int {
	i := 0
	for i < len(words) && strings.HasPrefix(words[i], "-") && words[i] != "-" {
		if !strings.Contains(words[i], "=") && takesValue(flags, words[i]) {
			i++
		}
		i++
	}
	return i
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
	local w
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		# After -- the words are another program's: never run them, the shell completes files.
		[[ "$w" == "--" ]] && return 0
	done
	local opts
	opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" ` + completeFlag + ` 2>/dev/null)
	# Not compgen -W: it expands each word ($(…) in a session's name would run).
	COMPREPLY=()
	while IFS= read -r w; do
		[[ -n "$w" && "$w" == "$cur"* ]] && COMPREPLY+=("$w")
	done <<< "$opts"
}
complete -o bashdefault -o default -F _tapedeck tapedeck
`

const zshCompletion = `#compdef tapedeck
# zsh completion for tapedeck (tapedeck completion zsh)
_tapedeck() {
	local -a opts
	# After -- the words are another program's: never run them, complete files.
	if (( ${words[(i)--]} < CURRENT )); then
		_files
		return
	fi
	opts=("${(@f)$("${(@)words[1,CURRENT-1]}" "${words[CURRENT]}" ` + completeFlag + ` 2>/dev/null)}")
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
	# After -- the words are another program's: never run them.
	contains -- -- $words; and return
	command $words (commandline -ct) ` + completeFlag + ` 2>/dev/null
end
complete -c tapedeck -a '(__tapedeck_complete)'
`

package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// examplesOf are the command lines a command's help shows under
// "Examples:". They are written for a plugin's folder: one with its
// agentty-plugin.json, its program (node main.mjs here) and a host script
// (host.jsonl), where a session named greet was recorded and exported to
// tapes/. An example that needs the plugin changed says so in a comment
// ("# once the plugin changed"). TestHelpExamplesRunAsShown runs every one
// of them, command by command in the order of examplesOrder, exactly as
// --help prints it. No example names a fixture's variable or a plugin of
// anyone else's: they are read as the user's own plugin.
func examplesOf(command string) []string {
	switch command {
	case "record":
		return []string{
			"tapedeck record --name greet --host host.jsonl -- node main.mjs",
			"tapedeck record --pin-clock -- node main.mjs",
		}
	case "ls":
		return []string{"tapedeck ls", "tapedeck ls --json"}
	case "show":
		return []string{"tapedeck show greet", "tapedeck show last --dir out --method 'ui/*'", "tapedeck show greet --html greet.html"}
	case "export":
		return []string{"tapedeck export greet -o tapes/greet.jsonl --relative"}
	case "import":
		return []string{"tapedeck import tapes/greet.jsonl"}
	case "textconv":
		return []string{"tapedeck textconv tapes/greet.jsonl"}
	case "check":
		return []string{"tapedeck check greet", "tapedeck check tapes/greet.jsonl --json"}
	case "replay":
		return []string{"tapedeck replay greet", "tapedeck replay tapes/greet.jsonl --runs 3", "tapedeck replay tapes/greet.jsonl --update   # once the plugin changed: review takes the change"}
	case "review":
		return []string{"tapedeck review --list tapes", "tapedeck review --reject tapes"}
	case "test":
		return []string{"tapedeck test", "tapedeck test --junit report.xml tapes"}
	case "diff":
		return []string{"tapedeck diff greet tapes/greet.jsonl"}
	case "coverage":
		return []string{"tapedeck coverage tapes"}
	case "shrink":
		return []string{"tapedeck shrink tapes/greet.jsonl -o smallest.jsonl   # once the plugin changed"}
	case "play":
		return []string{"tapedeck play --open", "tapedeck play -- node main.mjs"}
	case "wrap":
		return []string{"tapedeck wrap --dry-run", "tapedeck wrap"}
	case "doctor":
		return []string{"tapedeck doctor"}
	case "unwrap":
		return []string{"tapedeck unwrap"}
	case "completion":
		return []string{"tapedeck completion bash"}
	case "verify":
		return []string{"tapedeck verify"}
	case "rm":
		return []string{"tapedeck rm greet"}
	case "gc":
		return []string{"tapedeck gc"}
	}
	return nil
}

// examplesOrder is the order in which the examples build on each other:
// record makes greet, export its tape, replay --update a pending change
// that review rejects, wrap what doctor checks and unwrap undoes, rm
// removes greet that import brings back from its tape, and gc comes last.
func examplesOrder() []string {
	return []string{"record", "ls", "show", "export", "textconv", "check", "replay", "review", "test", "diff",
		"coverage", "shrink", "play", "wrap", "doctor", "unwrap", "completion", "verify", "rm", "import", "gc"}
}

// withExamples ends each command's description with its examples.
func withExamples(cmds []*cli.Command) {
	for _, c := range cmds {
		ex := examplesOf(c.Name)
		if len(ex) == 0 {
			continue
		}
		c.Description = strings.TrimRight(c.Description, "\n") + "\n\nExamples:\n  $ " + strings.Join(ex, "\n  $ ")
	}
}

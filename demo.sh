#!/usr/bin/env bash
# tapedeck's main job on the bundled example plugin, end to end:
# record a session, look at it, replay it (same), replay it against a
# changed plugin (a named difference), and run the bundled golden tapes.
# Needs only Go. Everything goes to a temporary folder that is removed.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TAPEDECK_STORE="$work/store"

# Bold only on a terminal, and never with NO_COLOR set (no-color.org).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
	step() { printf '\n$ %s\n' "$*"; }
fi

go build -o "$work/tapedeck" .
go build -o "$work/hello-go" ./testdata/plugins/hello-go
PATH="$work:$PATH"

step "tapedeck record --name demo -- hello-go   (a host script plays the user)"
cat > "$work/host.jsonl" <<'JSONL'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"hello-go","name":"Hello","version":"1.0.0"},"language":"en","context":{}}}
{"jsonrpc":"2.0","method":"panel/open","params":{"context":{}}}
{"jsonrpc":"2.0","id":1,"result":null}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"name","event":"change","value":"Ada","context":{}}}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click","context":{}}}
{"jsonrpc":"2.0","id":2,"result":null}
{"jsonrpc":"2.0","method":"ui/event","params":{"element":"ask","event":"click","context":{}}}
{"jsonrpc":"2.0","id":3,"result":{"status":"asked"}}
{"jsonrpc":"2.0","method":"shutdown","params":{}}
JSONL
tapedeck record --name demo -- hello-go < "$work/host.jsonl" | cut -c1-110

step "tapedeck ls"
tapedeck ls

step "tapedeck replay demo   (the same plugin: no difference, exit 0)"
tapedeck replay demo

step "FIXTURE_LABEL=Howdy tapedeck replay demo   (a changed label: exit 1, the difference named)"
FIXTURE_LABEL=Howdy tapedeck replay demo || echo "(exit $?)"

step "tapedeck test testdata/tapes   (the bundled golden tapes; a plugin whose runtime is missing is skipped)"
tapedeck test testdata/tapes

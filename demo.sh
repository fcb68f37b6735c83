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

# Say what is built before building it: a cold Go cache downloads the
# modules first, and a newcomer should know what the wait is for.
echo "building tapedeck and the example plugin testdata/plugins/hello-go (the first time, Go downloads tapedeck's modules first)..."
CGO_ENABLED=0 go build -o "$work/tapedeck" .
go build -o "$work/hello-go" ./testdata/plugins/hello-go
PATH="$work:$PATH"

step "tapedeck record --name demo --host host.jsonl -- hello-go   (its host script plays Agentty and the user)"
(cd testdata/plugins/hello-go && tapedeck record --name demo --host host.jsonl -- hello-go)

step "tapedeck show demo   (the timeline: who said what, when, and each answer's latency)"
tapedeck show demo | cut -c1-130

step "tapedeck ls"
tapedeck ls

step "tapedeck replay demo   (the same plugin: no difference, exit 0)"
tapedeck replay demo

step "FIXTURE_LABEL=Howdy tapedeck replay demo   (a changed label: exit 1, the difference named)"
FIXTURE_LABEL=Howdy tapedeck replay demo || echo "(exit $?)"

step "tapedeck test testdata/tapes   (the bundled golden tapes; a plugin whose runtime is missing is skipped)"
tapedeck test testdata/tapes

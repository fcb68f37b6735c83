#!/usr/bin/env bash
# tapedeck shrink on the bundled tapes, each replayed against its plugin
# with a regression switched on (FIXTURE_LABEL for hello-*, WAITER_LABEL
# for waiter-*), with -j 1 and -j 2: prints shrink's closing lines
# (steps left, replays run, replays per minute). A tape whose interpreter
# is missing is skipped. Tape names as arguments run only those
# (bash bench/shrink.sh hello-go hello-node).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-shrink-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/tapedeck" .
go build -o "$tmp/hello-go" ./testdata/plugins/hello-go

tapes=("$@")
[ ${#tapes[@]} -gt 0 ] || tapes=(hello-go hello-node hello-python waiter-node waiter-python)
for t in "${tapes[@]}"; do
	case $t in
	hello-go) cmd=("$tmp/hello-go") ;;
	*-node) cmd=(node "testdata/plugins/$t/main.mjs") ;;
	*-python) cmd=(python3 "testdata/plugins/$t/main.py") ;;
	esac
	command -v "${cmd[0]}" >/dev/null 2>&1 || { echo "$t: ${cmd[0]} is not installed: skipped"; continue; }
	case $t in
	hello-*) env=(FIXTURE_LABEL=Howdy) ;;
	*) env=(WAITER_LABEL=found) ;;
	esac
	for j in 1 2; do
		printf '%s -j %s: ' "$t" "$j"
		env "${env[@]}" "$tmp/tapedeck" --store "$tmp/store" shrink "testdata/tapes/$t.jsonl" -o "$tmp/min.jsonl" -j "$j" -- "${cmd[@]}" 2>&1 |
			grep -E 'host steps left after' | sed 's/^tapedeck: shrink: //; s/; wrote .*//'
	done
done

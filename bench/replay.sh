#!/usr/bin/env bash
# Builds tapedeck and the minimal lockstep replayer into a temporary folder
# and times `tapedeck replay` of a 10,000-frame tape against cat beside the
# lockstep replayer, taking turns. Extra arguments go to the harness:
# bash bench/replay.sh -rounds 11.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-replay-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/tapedeck" .
go build -o "$tmp/lockstep" ./bench/lockstep
go build -o "$tmp/replaybench" ./bench/replaybench

"$tmp/replaybench" -tapedeck "$tmp/tapedeck" -lockstep "$tmp/lockstep" "$@"

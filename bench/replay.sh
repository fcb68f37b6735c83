#!/usr/bin/env bash
# Builds tapedeck, the minimal lockstep replayer and the hello-go fixture
# into a temporary folder, times `tapedeck replay` of a 10,000-frame tape
# against cat beside the lockstep replayer, taking turns, and then the
# replays per minute of the bundled Go plugin's tape (`replay --runs 200`
# with the default -j and with -j 1). Extra arguments go to
# the harness: bash bench/replay.sh -rounds 11, or -baseline OLD_BINARY to
# compare with another build in the same run.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-replay-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -o "$tmp/tapedeck" .
go build -o "$tmp/lockstep" ./bench/lockstep
go build -o "$tmp/replaybench" ./bench/replaybench
go build -o "$tmp/hello-go" ./testdata/plugins/hello-go

"$tmp/replaybench" -tapedeck "$tmp/tapedeck" -lockstep "$tmp/lockstep" -hello "$tmp/hello-go" "$@"

#!/usr/bin/env bash
# Builds tapedeck, the echo child and the reference relay into a temporary
# folder, then runs the relay benchmark against them and prints its tables.
# Extra arguments go to the benchmark: bash bench/run.sh -quick,
# bash bench/run.sh -n 20000 -rounds 5.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -o "$tmp/tapedeck" .
go build -o "$tmp/echo" ./bench/echo
go build -o "$tmp/refrelay" ./bench/refrelay
go build -o "$tmp/relay" ./bench/relay

"$tmp/relay" -tapedeck "$tmp/tapedeck" -echo "$tmp/echo" -ref "$tmp/refrelay" "$@"

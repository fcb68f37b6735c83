#!/usr/bin/env bash
# Builds tapedeck and the echo child into a temporary folder, then runs the
# relay benchmark against them and prints its tables. Extra arguments go to
# the benchmark: bash bench/run.sh -quick, bash bench/run.sh -n 20000.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

BIN="$tmp/tapedeck"
ECHO="$tmp/echo"
go build -o "$BIN" .
go build -o "$ECHO" ./bench/echo

go run ./bench/relay -tapedeck "$BIN" -echo "$ECHO" "$@"

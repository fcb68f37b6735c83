#!/usr/bin/env bash
# Peak RSS of each tapedeck command on a big tape, and that peak ÷ the
# size of the tape it reads (bench/memory/main.go): check, show,
# textconv, import, export, diff and diff --html read as they go; replay, test and
# shrink still hold the tape. The first argument is the frames in each
# tape (default 1000000, about 115 MB); the rest go to the harness
# (-skip replay,test,shrink leaves out the replays, minutes each on a big
# tape).
#
#   bash bench/memory.sh 200000
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v sed >/dev/null 2>&1 || { echo "memory: the plugin is sed, which is not installed" >&2; exit 1; }
frames=${1:-1000000}
case $frames in
'' | *[!0-9]*)
	echo "memory: FRAMES must be a number, got \"$frames\" (usage: bash bench/memory.sh [FRAMES] [-skip replay,test,shrink])" >&2
	exit 2
	;;
esac
shift || true
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-memory-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/tapedeck" .
go build -o "$tmp/memory" ./bench/memory
"$tmp/memory" -tapedeck "$tmp/tapedeck" -frames "$frames" "$@"

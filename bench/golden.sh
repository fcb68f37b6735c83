#!/usr/bin/env bash
# tapedeck test on 50 tapes: one job at a time, then one per CPU, to show
# that the golden run uses every core. The tapes are copies of a bundled
# example tape (hello-python, or hello-go when python3 is missing).
# bash bench/golden.sh N takes N copies instead (the tests' smoke run: 8).
set -euo pipefail
copies=${1:-50}
case $copies in '' | *[!0-9]*) echo "bench/golden.sh: the number of copies is a count, not $copies" >&2; exit 2 ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-golden-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/tapedeck" .

plugin=hello-python
command -v python3 >/dev/null 2>&1 || plugin=hello-go
if [ "$plugin" = hello-go ]; then
	# A built binary, not go run: the run should measure tapedeck, not the compiler.
	go build -o "$tmp/hello-go" ./testdata/plugins/hello-go
fi
mkdir -p "$tmp/tapes"
dir=$(cd "testdata/plugins/$plugin" && pwd)
for i in $(seq -w 1 "$copies"); do
	sed -e "1s|\"cwd\":\"[^\"]*\"|\"cwd\":\"$dir\"|" \
		-e "1s|\"command\":\\[\"go\",\"run\",\".\"\\]|\"command\":[\"$tmp/hello-go\"]|" \
		"testdata/tapes/$plugin.jsonl" > "$tmp/tapes/t$i.jsonl"
done

cpus=$(getconf _NPROCESSORS_ONLN)
run() { # jobs
	local start end
	start=$(date +%s%N)
	"$tmp/tapedeck" test -j "$1" "$tmp/tapes" | tail -1
	end=$(date +%s%N)
	echo $(( (end - start) / 1000000 ))
}
echo "tapedeck test, $copies copies of testdata/tapes/$plugin.jsonl, $cpus CPUs"
out1=$(run 1); ms1=$(echo "$out1" | tail -1)
outn=$(run "$cpus"); msn=$(echo "$outn" | tail -1)
printf '%-10s %-22s %8s ms\n' "-j 1" "$(echo "$out1" | head -1)" "$ms1"
printf '%-10s %-22s %8s ms\n' "-j $cpus" "$(echo "$outn" | head -1)" "$msn"
awk -v a="$ms1" -v b="$msn" -v n="$cpus" 'BEGIN { printf "speed-up with %d jobs: %.2fx (ideal %dx)\n", n, a / b, n }'

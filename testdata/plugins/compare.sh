#!/usr/bin/env bash
# compare.sh: feeds the same scripted sessions to hello-node, hello-python and
# hello-go and checks that they behave the same: stdout byte for byte, exit
# code, and stderr after the "hello-<lang>: " prefix is normalised.
#
# Usage: testdata/plugins/compare.sh [-v] [-k] [FILE...]
#
#   FILE...  extra session files (raw bytes fed to stdin as is), compared with
#            no environment. Without FILE the built-in sessions below are used.
#   -v       print every session name, not only failures.
#   -k       keep the work directory (inputs and outputs) and print its path.
#
# A plugin whose runtime (node, python3, go) is not on PATH is skipped with a
# message. The first plugin available is the reference the others are
# compared with. Exits 1 on any difference, 0 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
verbose=0
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1; shift ;;
	-k) keep=1; shift ;;
	--) shift; break ;;
	-*) echo "usage: $0 [-v] [-k] [FILE...]" >&2; exit 2 ;;
	*) break ;;
	esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hello-compare.XXXXXX")
if [ "$keep" = 1 ]; then
	echo "work directory: $work"
else
	trap 'rm -rf "$work"' EXIT
fi

# ---- plugins ----------------------------------------------------------------

names=()
cmds=()
if command -v node >/dev/null 2>&1; then
	names+=(node); cmds+=("node $here/hello-node/main.mjs")
else
	echo "skipping hello-node: node is not on PATH"
fi
if command -v python3 >/dev/null 2>&1; then
	names+=(python); cmds+=("python3 $here/hello-python/main.py")
else
	echo "skipping hello-python: python3 is not on PATH"
fi
if command -v go >/dev/null 2>&1; then
	# Run the built binary, not "go run": go run adds "exit status 3" to
	# stderr and changes the exit code.
	if (cd "$here/hello-go" && go build -o "$work/hello-go" .); then
		names+=(go); cmds+=("$work/hello-go")
	else
		echo "hello-go does not build" >&2
		exit 1
	fi
else
	echo "skipping hello-go: go is not on PATH"
fi
if [ ${#names[@]} -lt 2 ]; then
	echo "fewer than two plugins can run: nothing to compare"
	exit 0
fi

# ---- sessions ---------------------------------------------------------------

mkdir -p "$work/in"
# The input of session NAME is $work/in/NAME, its environment (NUL separated
# VAR=value) $work/in/NAME.env; $work/list names the sessions in order.
: >"$work/list"

# session NAME [VAR=value...] < input (also at the end of a pipeline, in a
# subshell: it only writes files)
session() {
	local n=$1
	shift
	cat >"$work/in/$n"
	: >"$work/in/$n.env"
	local kv
	for kv in "$@"; do
		printf '%s\0' "$kv" >>"$work/in/$n.env"
	done
	echo "$n" >>"$work/list"
}

init='{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"apiVersion":1,"agentty":{"version":"1.9.0"},"plugin":{"id":"hello","name":"Hello","version":"1.0.0","dir":"/plugins/hello","dataDir":"/data/hello"},"language":"en","context":{"workspace":null,"pane":null,"language":"en"}}}'
ev() { printf '{"jsonrpc":"2.0","method":"ui/event","params":%s}\n' "$1"; }

standard() {
	printf '%s\n' "$init"
	printf '%s\n' '{"jsonrpc":"2.0","method":"panel/open","params":{}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{}}'
	ev '{"element":"greet","event":"click"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{}}'
	ev '{"element":"name","event":"change","value":"Ada"}'
	ev '{"element":"greet","event":"click"}'
	ev '{"element":"ask","event":"click"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":4,"result":{"status":"sent"}}'
	printf '%s\n' '{"jsonrpc":"2.0","method":"context/changed","params":{"workspace":"w","pane":null,"language":"en"}}'
	ev '{"element":"items","event":"action","item":"b","action":"rm"}'
	printf '%s\n' '{"jsonrpc":"2.0","method":"shutdown"}'
}

if [ $# -gt 0 ]; then
	i=0
	for f in "$@"; do
		i=$((i + 1))
		session "file$i-$(basename "$f")" <"$f" || exit 2
	done
else
	standard | session standard

	# CRLF endings, blank and whitespace-only lines, extra \r, inner whitespace.
	{
		standard | sed 's/$/\r/'
	} | session crlf
	{
		printf '\n\r\n \t \r\n\r\r\n'
		printf '%s\r\r\n' "$init"
		printf ' { "jsonrpc" : "2.0" ,\t"method" : "panel/open" } \r\n'
		printf '\r\n\n'
		printf '{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click"}}\r'
		printf 'x\n' # a lone \r does not split a line: this one is not JSON
		printf '{"jsonrpc":"2.0","method":"context/changed"}\n\n'
	} | session blank-lines

	# Lines that are not JSON, or not objects, or neither requests, notifications
	# nor responses.
	{
		printf '%s\n' 'hello' '{' '{"a":1,}' '[1,2,]' '{"a":1}x' "{'a':1}" '{"a":01}' '{"a":1.}' '{"a":.5}' \
			'{"a":-}' '{"a":1e}' '{"a":NaN}' '{"a":Infinity}' '{"a":-Infinity}' '{"a":undefined}' \
			'{"a":"\x"}' '{"a":"\u12"}' '{"a":"\u12G4"}' '{"a":tru}' '{"a":nulls}' '{"a" 1}' '{a:1}' \
			'[1,2]' '"str"' 'null' 'true' '42' '-0.5e3' '[]' \
			'{}' '{"id":null}' '{"id":null,"method":5}' '{"method":null}' '{"method":["x"]}' '{"result":{}}'
		printf '{"a":"tab\there"}\n'           # raw control character in a string
		printf '\xef\xbb\xbf{"jsonrpc":"2.0","method":"context/changed"}\n' # BOM
		printf '\f{"jsonrpc":"2.0","method":"context/changed"}\n'           # not JSON whitespace
		printf '{"jsonrpc":"2.0","method":"context/changed"}\v\n'
		printf '\xff\xfe\n'
		printf '{"jsonrpc":"2.0","method":"context/changed"} \t\r \n' # valid: trailing JSON whitespace
		printf '{"jsonrpc":"2.0","method":"context/changed","x":[[[[{"y":[{}]}]]]],"z":"}]\\"["}\n'
	} | session non-json

	# Request ids are echoed as written, whitespace removed.
	{
		for id in '"abc"' '"a b \"c\" \\ \u0041 \ud800"' '1.5' '1e2' '1E+02' '-0' '0' '1.0' '100000000000000000000000000' \
			'false' 'true' '{ "x" : [ 1 , 2 ] , "y" : " s p " }' '[ ]' '""' '-1.25e-7'; do
			printf '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"plugin":{"id":"p"}}}\n' "$id"
		done
		printf '{ "id" :\t"first" , "method" : "initialize" , "id" : [ 9 , "x y" ] }\n' # last id wins
		printf '{"\\u0069d":"escaped key","method":"initialize"}\n'
		printf '{"jsonrpc":"2.0","id":"bad \xe2\x82 utf8 \xff","method":"initialize"}\n'
		printf '{"jsonrpc":"2.0","id":"caf\xc3\xa9 \xf0\x9f\x98\x80","method":"initialize"}\n'
		printf '{"jsonrpc":"2.0","id":3,"method":"initialize"}\n'
		printf '{"jsonrpc":"2.0","id":3,"method":"initialize","params":null}\n'
		printf '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"plugin":"x"}}\n'
		for pid in '12' '1e21' '1e-7' '0.000001' '-0' '123456789012345678901' '1.7976931348623157e308' '1e400' '5e-324' \
			'[1,[2,null],true,"s"]' '{}' 'null' 'false' '[null]' '[]' '"\ud83d\ude00 \ud800 \udc00x"' '"tab\there\nnl"'; do
			printf '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"plugin":{"id":%s}}}\n' "$pid"
		done
	} | session ids

	# Host requests other than initialize, and unknown notifications.
	{
		printf '%s\n' \
			'{"jsonrpc":"2.0","id":1,"method":"shutdown"}' \
			'{"jsonrpc":"2.0","id":2,"method":"panel/open"}' \
			'{"jsonrpc":"2.0","id":"q","method":"ui/event","params":{"element":"greet","event":"click"}}' \
			'{"jsonrpc":"2.0","id":3,"method":""}' \
			'{"jsonrpc":"2.0","id":4,"method":"weird \"quoted\" \\ \/ \b\f\n\r\t \u0001 \u001f \u007f \u2028 é \ud83d\ude00 \ud800 \udfff"}' \
			'{"jsonrpc":"2.0","id":5,"method":"x","result":{}}' \
			'{"jsonrpc":"2.0","method":"nope"}' \
			'{"jsonrpc":"2.0","method":"initialize","params":{"plugin":{"id":"notification"}}}' \
			'{"jsonrpc":"2.0","method":"Shutdown"}' \
			'{"jsonrpc":"2.0","id":null,"method":"context/changed"}'
	} | session unknown-requests

	# Answers to the plugin's own requests: errors, out of order, unknown ids.
	{
		printf '%s\n' '{"jsonrpc":"2.0","method":"panel/open"}' # 1
		ev '{"element":"ask","event":"click"}'                 # 2
		ev '{"element":"ask","event":"click"}'                 # 3
		ev '{"element":"ask","event":"click"}'                 # 4
		ev '{"element":"ask","event":"click"}'                 # 5
		ev '{"element":"ask","event":"click"}'                 # 6
		ev '{"element":"ask","event":"click"}'                 # 7
		ev '{"element":"ask","event":"click"}'                 # 8
		printf '%s\n' \
			'{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"denied"}}' \
			'{"jsonrpc":"2.0","id":2,"result":{"status":"sent"}}' \
			'{"jsonrpc":"2.0","id":2,"result":{"status":"again"}}' \
			'{"jsonrpc":"2.0","id":"4","result":{"status":"string id"}}' \
			'{"jsonrpc":"2.0","id":4.0,"error":"just a string"}' \
			'{"jsonrpc":"2.0","id":5e0,"error":null,"result":{"status":1e21}}' \
			'{"jsonrpc":"2.0","id":6,"error":false}' \
			'{"jsonrpc":"2.0","id":7,"result":null}' \
			'{"jsonrpc":"2.0","id":8,"error":{"message":["a",1,null]},"result":{"status":"x"}}' \
			'{"jsonrpc":"2.0","id":1,"result":{"status":"setPanel answer is silent"}}' \
			'{"jsonrpc":"2.0","id":99,"result":{}}' \
			'{"jsonrpc":"2.0","id":true,"result":{}}' \
			'{"jsonrpc":"2.0","id":-1,"error":{"code":1,"message":"x"}}'
		ev '{"element":"ask","event":"click"}' # 9
		ev '{"element":"greet","event":"click"}' # 10
		printf '%s\n' \
			'{"jsonrpc":"2.0","id":10,"result":{}}' \
			'{"jsonrpc":"2.0","id":9,"result":{"status":"\ud800 \u0007 é"}}'
	} | session responses

	# ui/event variants, context/changed, item actions, names.
	{
		printf '%s\n' '{"jsonrpc":"2.0","method":"panel/open"}' '{"jsonrpc":"2.0","method":"context/changed"}' \
			'{"jsonrpc":"2.0","method":"context/changed","params":null}'
		ev '{"element":"greet","event":"click"}'
		for v in '""' '0' '-0' 'false' 'true' '[]' '[null]' '{}' '[1,[2,[3,null]],{"a":1},"s"]' '1e21' '1e-7' '123.456' \
			'"\ud83d\ude00\ud800\udc00 \ud83d"' '"q\"uote\\back/slash\u0000\u001f\u007f\u2028"' '"é ü 日本"' 'null'; do
			ev "{\"element\":\"name\",\"event\":\"change\",\"value\":$v}"
			ev '{"element":"greet","event":"click"}'
		done
		ev '{"element":"name","event":"change"}'
		ev '{"element":"greet","event":"click"}'
		ev '{"element":"name","event":"change","value":"Zed","value":"Last"}'
		ev '{"element":"greet","event":"click"}'
		for a in '"item":"a","action":"rm"' '"item":1e21,"action":[1,2]' '"item":null' '' '"item":{},"action":false' \
			'"item":"\ud800","action":"x\ny"' '"item":0.1,"action":-5e-7'; do
			ev "{\"element\":\"items\",\"event\":\"action\"${a:+,$a}}"
		done
		ev '{"element":"greet","event":"hover"}'
		ev '{"element":"GREET","event":"click"}'
		ev '"not an object"'
		ev 'null'
		ev '[{"element":"greet","event":"click"}]'
		printf '%s\n' '{"jsonrpc":"2.0","method":"ui/event"}'
		printf '%s\n' '{"jsonrpc":"2.0","method":"ui/event","params":{"element":"gr\u0065et","event":"click"}}'
		printf '%s\n' '{"jsonrpc":"2.0","method":"ui/event","params":{"element":"greet","event":"click"},"params":{"element":"ask","event":"click"}}'
	} | session events

	# Environment.
	standard | session label FIXTURE_LABEL='Hi "there" \ tab	nl
é 😀 ctl'$'\x01\x7f'
	standard | session label-empty FIXTURE_LABEL=
	standard | session label-bad-utf8 FIXTURE_LABEL=$'a\xe2\x82b\xed\xa0\x80c\xff\xc0\xafd\xf0\x9f\x98e\xf4\x90\x80\x80'
	{
		standard
		printf '%s\n' "$init"
	} | session crash-after-2 FIXTURE_CRASH_AFTER=2
	{
		printf '%s\n' '{"jsonrpc":"2.0","method":"panel/open"}'
		ev '{"element":"ask","event":"click"}'
	} | session crash-after-1 FIXTURE_CRASH_AFTER=1
	standard | session crash-after-0 FIXTURE_CRASH_AFTER=0
	standard | session crash-after-02 FIXTURE_CRASH_AFTER=02
	standard | session crash-after-big FIXTURE_CRASH_AFTER=99999999999999999999999
	standard | session crash-after-bad FIXTURE_CRASH_AFTER=' 2'
	standard | session crash-after-neg FIXTURE_CRASH_AFTER=-1
	standard | session crash-after-3x FIXTURE_CRASH_AFTER=3x

	# Ends of input.
	: | session empty
	printf '%s\n' "$init" '{"jsonrpc":"2.0","method":"panel/open"}' | session eof-without-shutdown
	printf '%s\n%s' "$init" '{"jsonrpc":"2.0","method":"context/changed"}' | session no-final-newline
	printf '%s\n%s' "$init" '{"jsonrpc":"2.0","method":"shutdown"}' | session shutdown-no-final-newline
	printf '%s\n%s\r' "$init" '{"jsonrpc":"2.0","method":"context/changed"}' | session final-cr
	printf '%s\n%s' "$init" '{"jsonrpc":"2.0",' | session truncated-last-line
	{
		printf '%s\n' '{"jsonrpc":"2.0","method":"shutdown"}' "$init" '{"jsonrpc":"2.0","method":"panel/open"}'
	} | session after-shutdown

	# Long lines (well past 64 KiB) and moderately deep nesting.
	{
		printf '{"jsonrpc":"2.0","method":"ui/event","params":{"element":"name","event":"change","value":"'
		head -c 300000 /dev/zero | tr '\0' 'x'
		printf 'é"}}\n'
		ev '{"element":"greet","event":"click"}'
		printf '{"jsonrpc":"2.0","id":"'
		head -c 200000 /dev/zero | tr '\0' 'y'
		printf '","method":"initialize","params":{"plugin":{"id":"long"}}}\n'
		printf '{"jsonrpc":"2.0","method":"ui/event","params":{"element":"name","event":"change","value":'
		head -c 300 /dev/zero | tr '\0' '['
		printf '"deep"'
		head -c 300 /dev/zero | tr '\0' ']'
		printf '}}\n'
		ev '{"element":"greet","event":"click"}'
	} | session long-lines
fi

# ---- run --------------------------------------------------------------------

# run CMD NAME OUTPREFIX: runs one plugin on one session.
run() {
	local cmd=$1 n=$2 out=$3
	local -a envs=()
	local kv
	while IFS= read -r -d '' kv; do envs+=("$kv"); done <"$work/in/$n.env"
	# shellcheck disable=SC2086 # cmd is split on purpose
	env -u FIXTURE_LABEL -u FIXTURE_CRASH_AFTER "${envs[@]}" $cmd <"$work/in/$n" >"$out.stdout" 2>"$out.stderr"
	echo $? >"$out.rc"
	LC_ALL=C sed -E 's/^hello-(node|python|go): /hello-*: /' "$out.stderr" >"$out.stderr.norm"
}

sessions=()
while IFS= read -r n; do sessions+=("$n"); done <"$work/list"

fail=0
mkdir -p "$work/out"
for n in "${sessions[@]}"; do
	for i in "${!names[@]}"; do
		run "${cmds[$i]}" "$n" "$work/out/$n.${names[$i]}"
	done
	ref=${names[0]}
	bad=
	for i in "${!names[@]}"; do
		[ "$i" = 0 ] && continue
		o=${names[$i]}
		for part in stdout stderr.norm rc; do
			if ! cmp -s "$work/out/$n.$ref.$part" "$work/out/$n.$o.$part"; then
				bad=1
				echo "DIFF $n: $ref vs $o ($part)"
				diff <(LC_ALL=C cat -A "$work/out/$n.$ref.$part") <(LC_ALL=C cat -A "$work/out/$n.$o.$part") | head -20
			fi
		done
	done
	if [ -n "$bad" ]; then
		fail=1
	elif [ "$verbose" = 1 ]; then
		echo "same $n ($(wc -l <"$work/out/$n.$ref.stdout") stdout lines, exit $(cat "$work/out/$n.$ref.rc"))"
	fi
done

if [ "$fail" = 0 ]; then
	echo "ok: ${names[*]} agree on ${#sessions[@]} sessions"
fi
exit "$fail"

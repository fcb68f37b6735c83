#!/bin/sh
# setsid-sh: a fixture plugin that leaves a child behind, for the test that
# a replay ends what its plugin started. It starts `sleep 600` in a session
# of its own (setsid(1): out of the plugin's process group), writes that
# child's pid to the file $SETSID_PIDFILE, and then, as its argument says:
#   exit  reads stdin to its end and exits, the child still running
#   hang  ignores SIGTERM and never ends (the replay kills it)
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo $! >"$SETSID_PIDFILE.tmp" && mv "$SETSID_PIDFILE.tmp" "$SETSID_PIDFILE"
case $1 in
exit) cat >/dev/null ;;
hang)
	trap '' TERM
	while :; do sleep 1; done
	;;
*)
	echo "usage: main.sh exit|hang" >&2
	exit 2
	;;
esac

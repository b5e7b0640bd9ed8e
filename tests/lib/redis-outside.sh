#!/bin/sh
# Stands in for redis-server in the test of fault truth: the real server
# daemonizes (forks away and is given to init), so it runs outside the
# process tree locklab manages, and a fault that signals that tree misses
# the one that serves. Its PID goes into LOCKLAB_MARK (the test stops it
# by PID); a TERM or INT to this script stops it too.
pidfile="$LOCKLAB_MARK.pid"
rm -f "$pidfile"
redis-server "$@" --daemonize yes --pidfile "$pidfile" || exit 1
i=0
while [ ! -s "$pidfile" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
cat "$pidfile" >> "$LOCKLAB_MARK"
trap 'kill "$(cat "$pidfile")"; exit 0' TERM INT
while :; do sleep 0.1; done

#!/bin/sh
# Stands in front of the real redis-server for tests that must prove whether
# locklab started a server (and which PID to look for afterwards): it notes
# its PID, then becomes redis-server with the same PID.
echo $$ >> "$LOCKLAB_MARK"
exec redis-server "$@"

#!/bin/sh
# A pi without the agent-board worker role: runs "$@" minus every "-e <path>" pair the runner adds
# (exec, so the worker the runner watches is pi itself). Usage: drop-extension.sh <node> <cli> <args...>
node="$1"; cli="$2"; shift 2
count=$#
skip=0
while [ "$count" -gt 0 ]; do
	arg="$1"; shift; count=$((count - 1))
	if [ "$skip" = 1 ]; then skip=0; continue; fi
	if [ "$arg" = "-e" ]; then skip=1; continue; fi
	set -- "$@" "$arg"
done
exec "$node" "$cli" "$@"

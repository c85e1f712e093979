#!/usr/bin/env bash
# Run one stage of `make test` / `make check` and say how long it took:
#   bash scripts/timed.sh NAME COMMAND [ARG...]
set -uo pipefail
name=$1
shift
start=$(date +%s)
"$@"
status=$?
took=$(($(date +%s) - start))
if [ "$status" -eq 0 ]; then
  echo "--- $name: ${took} s"
else
  echo "--- $name: failed (exit $status) after ${took} s"
fi
exit "$status"

#!/usr/bin/env bash
# Whether `make check`'s tools are installed for the Python it uses; if not, one line saying
# what to run first. Usage: bash scripts/tools_ready.sh PYTHON
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python=$1
missing=""
if ! [ -x "$(command -v "$python")" ]; then
  missing="$python"
else
  bin=$(dirname "$(command -v "$python")")
  for tool in ruff jlpm pytest; do
    [ -x "$bin/$tool" ] || missing="$missing $tool"
  done
  [ -d node_modules ] || missing="$missing node_modules"
fi
if [ -n "$missing" ]; then
  echo "make check: its tools are not installed (missing: ${missing# }): run 'make install' first (a few minutes), or 'make test' (installs, then runs everything)" >&2
  exit 2
fi

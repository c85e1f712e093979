#!/usr/bin/env bash
# Build the JupyterLab extension when its bundle is missing or older than any front-end source
# (hatch-jupyter-builder's editable build does the same, after a `jlpm install` of its own:
# `make install` installs the npm packages once, then skips that hook and runs this).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stamp=kale_ext/labextension/package.json
if [ ! -f kale_ext/labextension/static/style.js ] || [ ! -f lib/index.js ] || [ ! -f "$stamp" ] ||
  [ -n "$(find labextension package.json tsconfig.json -newer "$stamp" -print -quit)" ]; then
  echo "--- jlpm build"
  jlpm build
fi

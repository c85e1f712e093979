#!/usr/bin/env bash
# Build and test the JupyterLab extension: Jest unit tests, then the Galata
# (Playwright) browser tests on the system Chromium.
#
# Assumes `make install` has run (the Python package, the root's npm packages and the
# labextension link). Installs everything else it needs: Debian's chromium, ui-tests' npm
# packages (from its committed lockfile). No browser is downloaded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  echo "--- installing chromium (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
export CHROMIUM_PATH="${CHROMIUM_PATH:-$(command -v chromium)}"

# The root's npm packages are `make install`'s (once, from the lockfile); rebuild when the
# bundle is older than a source edited since.
bash scripts/build_frontend.sh

# JupyterLab must load this checkout's build (`make install` links it).
if ! jupyter labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -Eq 'kale-ext v[^ ]+ enabled +OK'; then
  echo "kale-ext is not an enabled labextension: run 'make install' first" >&2
  exit 1
fi

bash scripts/timed.sh jest jlpm test --maxWorkers=100%  # a worker per core

echo "--- playwright ($CHROMIUM_PATH)"
cd ui-tests
jlpm install --immutable
status=0
bash ../scripts/timed.sh galata jlpm playwright test || status=$?
if [ "$status" -ne 0 ]; then
  # each failure's reason, last: CI keeps only the end of the output
  python3 ../scripts/galata_failures.py test-results/report.json
fi
exit "$status"

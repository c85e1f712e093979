# The commands a new user needs (see README.md; CONTRIBUTING.md says which to run when):
#   make demo   run the example notebook as a distributed job on this machine (installs only
#               what the command line needs: no Node.js, no front-end build)
#   make test   install what the tests need, then run every test (Python, TypeScript, browser)
#   make check  after each change: lint, type checks and the unit tests (no real jobs, no browser)
PYTHON ?= python3
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check
# a worker per core; an idle worker takes tests queued for the other, and the longest modules
# start first (tests/order.py), so no long module is left running alone at the end
PYTEST = $(PYTHON) -m pytest -n auto --dist worksteal
TIMED = bash scripts/timed.sh

# say what each slow step does, with a line every 10 s while it runs
STEP = $(PYTHON) scripts/step.py

.PHONY: demo demo-install test check install lint typecheck

LABEXT_LINK = $(shell $(PYTHON) -c "import sys; print(sys.prefix)")/share/jupyter/labextensions/kale-ext

install:
	$(PIP) "torch==2.13.0"
	@# a link left by another checkout's `develop` would make pip reach into that checkout
	if [ -L "$(LABEXT_LINK)" ]; then rm "$(LABEXT_LINK)"; fi
	@# the npm packages once, from the lockfile (lint, types, Jest and the build read them);
	@# hatch-jupyter-builder's hook would run `jlpm install` again: the build runs when stale
	jlpm install --immutable
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(PIP) -e ".[dev,test,examples]"
	bash scripts/build_frontend.sh
	jupyter-builder develop . --overwrite

# the command line and the example's packages, in one resolve: SKIP_JUPYTER_BUILDER skips
# hatch-jupyter-builder's front-end build (yarn install, tsc, webpack), which only JupyterLab
# needs (no Node.js)
demo-install:
	@# as in install: pip would write install.json through another checkout's `develop` link
	if [ -L "$(LABEXT_LINK)" ]; then rm "$(LABEXT_LINK)"; fi
	$(STEP) "installing torch 2.13.0, scikit-learn and kale_ext's command line (no front end)" \
		env SKIP_JUPYTER_BUILDER=1 $(PIP) "torch==2.13.0" -e ".[examples]"

demo: demo-install
	$(PYTHON) -m kale_ext.cli run examples/digits_ddp.ipynb --backend local --nodes 2 --follow

lint:
	ruff check kale_ext tests benchmarks
	ruff format --check kale_ext tests benchmarks
	jlpm lint:check

# the panel's sources and its Jest specs (Jest itself only transpiles them)
typecheck:
	jlpm tsc --noEmit -p tsconfig.test.json

test: install
	$(TIMED) lint $(MAKE) lint
	$(TIMED) typecheck $(MAKE) typecheck
	@# the slowest by the wall clock and by CPU time (on a loaded machine, the measure that holds)
	$(TIMED) pytest $(PYTEST) --durations=25 --cpu-durations=25
	bash scripts/test_frontend.sh

check:
	$(TIMED) lint $(MAKE) lint
	$(TIMED) typecheck $(MAKE) typecheck
	$(TIMED) "pytest (not slow)" $(PYTEST) -m "not slow" -q
	@# a worker per core (Jest's default leaves one core idle)
	$(TIMED) jest jlpm jest --silent --maxWorkers=100%

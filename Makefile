# The commands a new user needs (see README.md; CONTRIBUTING.md says which to run when):
#   make demo   run the example notebook as a distributed job on this machine (installs only
#               what the command line needs: no Node.js, no front-end build)
#   make test   install what the tests need, then run every test (Python, TypeScript, browser)
#   make check  after each change: lint, type checks and the unit tests (no real jobs, no browser)
# Everything goes into a virtualenv in the checkout (.venv, made on first use), so what a test
# run uses is what its own install resolved; PYTHON=/path/to/bin/python uses another one.
VENV = .venv
PYTHON ?= $(VENV)/bin/python
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check
# the tools the targets call (jlpm, ruff, jupyter, pytest) are those beside that Python
ifneq ($(findstring /,$(PYTHON)),)
export PATH := $(abspath $(dir $(PYTHON))):$(PATH)
endif
# a worker per core; an idle worker takes tests queued for the other, and the longest modules
# start first (tests/order.py), so no long module is left running alone at the end
PYTEST = $(PYTHON) -m pytest -n auto --dist worksteal
TIMED = bash scripts/timed.sh

# say what each slow step does, with a line every 10 s while it runs
STEP = $(PYTHON) scripts/step.py

.PHONY: demo demo-install test check install lint typecheck tools screenshots benchmarks

LABEXT_LINK = $(shell $(PYTHON) -c "import sys; print(sys.prefix)")/share/jupyter/labextensions/kale-ext

# the default Python: a virtualenv of the checkout's own, made by the machine's python3
$(VENV)/bin/python:
	python3 -m venv $(VENV)

install: $(if $(filter $(VENV)/bin/python,$(PYTHON)),$(VENV)/bin/python)
	@start=$$(date +%s); \
	bash scripts/system_packages.sh && \
	$(STEP) "installing torch 2.13.0" $(PIP) "torch==2.13.0" && \
	if [ -L "$(LABEXT_LINK)" ]; then rm "$(LABEXT_LINK)"; fi && \
	$(STEP) "installing kale_ext and what its tests need (JupyterLab brings jlpm)" \
		env HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(PIP) -e ".[dev,test,examples]" && \
	$(STEP) "installing the npm packages from yarn.lock" jlpm install --immutable && \
	bash scripts/build_frontend.sh && \
	jupyter-builder develop . --overwrite && \
	$(STEP) "building the real control plane's binaries from Go modules (cached by version)" \
		$(PYTHON) -m tests.harness.controlplane.build && \
	echo "--- install: $$(($$(date +%s) - start)) s"
	@# (a link left by another checkout's `develop` would make pip reach into that checkout;
	@# kale_ext goes in before `jlpm install`: jlpm comes with JupyterLab. The npm packages
	@# are installed once, from the lockfile; hatch-jupyter-builder's hook would run `jlpm
	@# install` again, so it is skipped and the build runs when stale)

# make check's tools, or one line saying what to run first
tools:
	@bash scripts/tools_ready.sh "$(PYTHON)"

# the command line and the example's packages, in one resolve: SKIP_JUPYTER_BUILDER skips
# hatch-jupyter-builder's front-end build (yarn install, tsc, webpack), which only JupyterLab
# needs (no Node.js)
demo-install: $(if $(filter $(VENV)/bin/python,$(PYTHON)),$(VENV)/bin/python)
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
	@start=$$(date +%s); \
	$(TIMED) lint $(MAKE) lint && \
	$(TIMED) typecheck $(MAKE) typecheck && \
	$(TIMED) benchmarks $(MAKE) benchmarks && \
	$(TIMED) pytest $(PYTEST) --ignore=tests/harness/controlplane --durations=25 --cpu-durations=25 && \
	$(TIMED) "cluster tier" $(PYTHON) -m pytest tests/harness/controlplane -p no:xdist --durations=10 && \
	bash scripts/test_frontend.sh && \
	echo "--- make test, after the install: $$(($$(date +%s) - start)) s"
	@# (pytest prints the slowest tests by the wall clock and by CPU time: on a loaded
	@# machine, the measure that holds. The cluster tier, against the real kube-apiserver,
	@# JobSet and Trainer, runs in one process: a pytest worker starts a control plane of its
	@# own, and one is enough)

check: tools
	@start=$$(date +%s); \
	$(TIMED) lint $(MAKE) lint && \
	$(TIMED) typecheck $(MAKE) typecheck && \
	$(TIMED) benchmarks $(MAKE) benchmarks && \
	$(TIMED) "pytest (not slow)" $(PYTEST) -m "not slow" -q && \
	$(TIMED) jest jlpm jest --silent --maxWorkers=100% && \
	echo "--- make check: $$(($$(date +%s) - start)) s"
	@# (Jest: a worker per core; its default leaves one core idle)

# every benchmark in its smoke mode (seconds each): an import error or a renamed function
# fails here, so none rots; run one in full with `python benchmarks/NAME.py`
benchmarks:
	$(PYTHON) benchmarks/smoke.py

# the README's screenshots (docs/screenshots), taken by the browser tests; a plain test run
# writes them to the ignored ui-tests/screenshots
screenshots: install
	KALE_EXT_SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots bash scripts/test_frontend.sh

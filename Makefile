# The two commands a new user needs (see README.md):
#   make demo   run the example notebook as a distributed job on this machine
#   make test   install what the tests need, then run every test (Python, TypeScript, browser)
PYTHON ?= python3
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check

.PHONY: demo test install lint

LABEXT_LINK = $(shell $(PYTHON) -c "import sys; print(sys.prefix)")/share/jupyter/labextensions/kale-ext

install:
	$(PIP) "torch==2.13.0"
	@# a link left by another checkout's `develop` would make pip reach into that checkout
	if [ -L "$(LABEXT_LINK)" ]; then rm "$(LABEXT_LINK)"; fi
	$(PIP) -e ".[dev,test,examples]"
	jupyter-builder develop . --overwrite

demo: install
	kale-ext run examples/digits_ddp.ipynb --backend local --nodes 2 --follow

lint:
	ruff check kale_ext tests benchmarks
	ruff format --check kale_ext tests benchmarks
	jlpm lint:check

test: install
	jlpm install --immutable
	$(MAKE) lint
	$(PYTHON) -m pytest
	bash scripts/test_frontend.sh

# Two entry points for a fresh machine (python3, pip, apt, make): `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
PYTEST_ARGS ?=

.PHONY: demo test test-quick quick-first quick-rest lint docs install dist clean

# Everything: the package with the dev, docs, report, pynamodb and otel extras (what tests, lint and the documentation
# site need) and bench (the benchmarks' own dependencies).
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,docs,report,pynamodb,bench,otel]'
	touch $(STAMP)

# Only what the demo needs: the package's dependencies and its report extra's, read from pyproject.toml, and the
# package itself run from this checkout. Two savings on a fresh clone (measured on a busy machine): no pip inside the
# venv (ensurepip took ~17 s; the machine's pip installs into it) and no build of the package (its isolated
# setuptools took ~17 s). Without a pip that takes --python (pip >= 22.3), the venv gets its own. A full install
# (STAMP) also serves, and `make install` later turns this venv into a full one.
DEMO_REQUIREMENTS := $(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	print("\n".join(p["dependencies"] + p["optional-dependencies"]["report"]))'
$(DEMO_STAMP): pyproject.toml
	if [ $(STAMP) -nt pyproject.toml ]; then touch $(DEMO_STAMP); \
	elif $(PY) -m pip install --help 2>/dev/null | grep -q -- '--python '; then \
		$(PY) -m venv --without-pip $(VENV) && $(DEMO_REQUIREMENTS) > $(VENV)/demo-requirements.txt && \
		$(PY) -m pip --python $(BIN)/python install -q --no-compile -r $(VENV)/demo-requirements.txt && \
		touch $(DEMO_STAMP); \
	else \
		$(PY) -m venv $(VENV) && $(DEMO_REQUIREMENTS) > $(VENV)/demo-requirements.txt && \
		$(BIN)/python -m pip install -q --no-compile -r $(VENV)/demo-requirements.txt && touch $(DEMO_STAMP); fi

install: $(STAMP)

# The wheel a user installs until dynlocust is published (docs/getting-started.md): dist/dynlocust-VERSION-py3-none-any.whl,
# built by pip in an isolated environment from this checkout (the shipped scenarios and the ECS template inside).
dist:
	rm -f dist/dynlocust-*.whl
	$(PY) -m pip wheel -q --no-deps --wheel-dir dist .
	@ls dist/dynlocust-*.whl

demo: $(DEMO_STAMP)
	$(BIN)/python -m dynlocust.cli run quickstart

# Beyond import-linter's contracts: no run-time import cycle among dynlocust's modules (grimp's graph, lazy imports
# included, type-checking ones not) and no underscore name imported from another module (the module is the unit of
# privacy). Each names what it found.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m tests.support.import_cycles dynlocust
	$(BIN)/python -m tests.support.private_imports dynlocust
	$(BIN)/mypy

# The documentation site, built strictly (a broken link, a missing page or a docstring mkdocstrings cannot read fails)
# into site/ (gitignored). Not --quiet: it hides the warnings, and then --strict passes them.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# --durations=30: CI's log names the slowest tests, so a run that creeps towards CI's 90 minutes says where.
test: lint docs
	$(BIN)/python -m pytest --durations=30 $(PYTEST_ARGS)

# Lint and every test not marked `slow` (real processes running tens of seconds), for each change, in two pytest
# processes at once: unit and conformance tests with the endpoint's and the mapper's integration tests (171 s on an
# idle 2-core machine), and the other integration tests (289 s); in all 4 min 52 s with lint, 16-18 min under
# `stress-ng --cpu 4 --hdd 2 --vm 2` (load 9-10). The tests
# use free ports and their own temporary directories, as the test runs sharing this machine do. (pytest-xdist cannot
# run them: Locust's gevent patches threading in xdist's workers, whose loop waits on an Event set from a thread.)
# --output-sync prints each half whole when it ends.
QUICK_FIRST := tests/unit tests/conformance tests/integration/local tests/integration/mapper
test-quick: lint
	$(MAKE) --no-print-directory -j2 --output-sync=target quick-first quick-rest

quick-first:
	$(BIN)/python -m pytest -m 'not slow' $(PYTEST_ARGS) $(QUICK_FIRST)

quick-rest:
	$(BIN)/python -m pytest -m 'not slow' $(PYTEST_ARGS) tests/integration \
		--ignore=tests/integration/local --ignore=tests/integration/mapper

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache results site dist build

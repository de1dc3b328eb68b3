# Two entry points for a fresh machine (python3, pip, apt, make): `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
PYTEST_ARGS ?=

.PHONY: demo test lint install clean

# Everything: the package with the dev, report and pynamodb extras (what tests and lint need) and bench (the
# benchmarks' own dependencies).
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,report,pynamodb,bench]'
	touch $(STAMP)

# Only what the demo needs: the package and the report extra. A full install (STAMP) also serves.
# --no-compile: byte-compiling every installed module took a third of the install; Python compiles what it imports.
$(DEMO_STAMP): pyproject.toml
	if [ $(STAMP) -nt pyproject.toml ]; then touch $(DEMO_STAMP); else \
		$(PY) -m venv $(VENV) && $(BIN)/python -m pip install -q --no-compile -e '.[report]' && touch $(DEMO_STAMP); fi

install: $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/dynlocust run scenarios/quickstart.yaml

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache results

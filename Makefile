# Set-up and entry points. `make demo` and `make test` are the two commands of the README.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test bench fixtures

# The virtual environment, with msinspect and its train, dry-run and dev extras; re-made when
# the package metadata changes. Idempotent.
$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[train,dryrun,dev]'
	touch $@

setup: $(VENV)/.installed
	$(BIN)/msinspect setup-dryrun

# The main job on the embedded default data.
demo: setup
	$(BIN)/msinspect parse fixtures/manual_parallel_8rank fixtures/seed_002 fixtures/docs_2_0

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/bench_parse.py

# Regenerate the 2.10 fixtures of fixtures/ from the training jobs (see fixtures/README.md):
# a few minutes. Refuses while fixtures/ has uncommitted changes (make fixtures ARGS=--force).
fixtures: setup
	$(BIN)/python tools/regen_fixtures.py $(ARGS)

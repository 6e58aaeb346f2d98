# Two entry points for a fresh machine with Python 3.10+:  `make demo`  and  `make test`.
# `make demo` installs the core (about 535 MB: Storm, scipy with HiGHS, SCIP, scikit-learn), which runs every command
# the demo needs; `make test` adds the extras and the test tools to the same environment. pip shows its progress.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast install bench clean

$(VENV)/.core: setup.py pyproject.toml
	@echo "make: installing stormcf's core into $(VENV) (about 535 MB; a few minutes on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on -e .
	@touch $@

$(VENV)/.all: $(VENV)/.core
	@echo "make: adding the extras and the test tools to $(VENV) (Gurobi, highspy, matplotlib, Dask, PyTorch, pytest)"
	$(BIN)/pip install --progress-bar on -e '.[all,test]'
	@touch $@

install: $(VENV)/.core

demo: $(VENV)/.core
	$(BIN)/stormcf demo

test: $(VENV)/.all
	$(BIN)/python -m pytest -q --durations=25

# the fast tier (under 3 minutes on 2 cores): without the slow modules and the slow tests of tests/tiers.py
test-fast: $(VENV)/.all
	$(BIN)/python -m pytest -q -m "not slow" --durations=10

bench: $(VENV)/.all
	$(BIN)/python scripts/bench_extraction.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

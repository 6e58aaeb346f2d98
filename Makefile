# Two entry points for a fresh machine with Python 3.10+:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install bench clean

$(BIN)/stormcf: setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[all,test]'
	@touch $@

install: $(BIN)/stormcf

demo: install
	$(BIN)/stormcf demo

test: install
	$(BIN)/python -m pytest -q --durations=25

bench: install
	$(BIN)/python scripts/bench_extraction.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

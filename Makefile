# apachetune: one entry point for set-up, tests, the C server and benchmarks.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
SAMPLE ?= fixtures/sample/apache2.conf

.PHONY: all setup demo test lint mpmd bench clean

all: setup mpmd

$(BIN)/apachetune: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(BIN)/apachetune

# The main job on the bundled sample config: what httpd will read, then the lint report.
demo: setup
	$(BIN)/apachetune parse $(SAMPLE) | head -25
	$(BIN)/apachetune lint $(SAMPLE)
	$(BIN)/apachetune size $(SAMPLE) --no-measure --memory 2048 --rate 300 --service-time-ms 50

mpmd:
	$(MAKE) -C src/mpmd

lint: setup
	$(BIN)/ruff check src tests benchmarks

test: setup mpmd
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q tests

bench: setup mpmd
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/run.py

clean:
	$(MAKE) -C src/mpmd clean
	rm -rf $(VENV) .pytest_cache build dist

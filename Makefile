# apachetune: one entry point for set-up, tests, the C server and benchmarks.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
SAMPLE ?= fixtures/sample/apache2.conf

.PHONY: all setup demo test lint mpmd native bench clean

all: setup mpmd native

$(BIN)/apachetune: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(BIN)/apachetune

# The main job on the bundled sample config: what httpd will read, then the lint report.
demo: setup native
	$(BIN)/apachetune parse $(SAMPLE) | head -25
	$(BIN)/apachetune lint $(SAMPLE)
	$(BIN)/apachetune size $(SAMPLE) --no-measure --memory 2048 --rate 300 --service-time-ms 50

mpmd:
	$(MAKE) -C src/mpmd

# The C line splitter the parser uses when it can (src/apachetune/config/fastlex.c); apachetune
# also builds it on first use. Built here first so parallel test workers do not each compile it.
# The package's bytecode is written too, as `pip install` of a wheel does: an editable install
# under PYTHONDONTWRITEBYTECODE=1 (CI images set it) otherwise compiles every module from source on
# each run, 0.03 s of a cold lint's 0.3 s.
native: setup
	$(BIN)/python -m apachetune.config.native
	$(BIN)/python -m compileall -q src/apachetune > /dev/null

lint: setup
	$(BIN)/ruff check src tests benchmarks

test: setup mpmd native
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --dist worksteal -q -m "not cpu_heavy" --durations=25 tests
	@# Tests that take every CPU run after the rest, alone: beside the suite's other worker a
	@# neighbour's CPU time skews what they measure (a CI run: 5,279 req/s predicted, 6,133 measured)
	$(BIN)/python -m pytest -q -m cpu_heavy --durations=0 tests

bench: setup mpmd native
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/run.py

clean:
	$(MAKE) -C src/mpmd clean
	rm -rf $(VENV) .pytest_cache build dist src/apachetune/config/_fastlex-*

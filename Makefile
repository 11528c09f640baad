# Two commands on a fresh machine: `make demo` and `make test`.
# Both create .venv on first use (Python >= 3.11) and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-slow bench lint clean

# `make demo ARGS="--rules classic --port 8090"`: any of `referee demo --help`'s options.
demo: $(VENV)/.installed
	$(BIN)/referee demo $(ARGS)

# The fast set; `make test-slow` runs the tests marked slow (the long samples). CI runs both.
test: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/pytest -m "not slow" -n auto --dist worksteal

test-slow: $(VENV)/.installed
	$(BIN)/pytest -m slow

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_adjudicate.py
	$(BIN)/python benchmarks/bench_loop.py
	$(BIN)/python benchmarks/bench_press_to_light.py
	$(BIN)/python benchmarks/bench_vision.py
	$(BIN)/python benchmarks/bench_watcher.py
	$(BIN)/python benchmarks/bench_service.py
	$(BIN)/python benchmarks/bench_kiosk.py
	$(BIN)/python benchmarks/bench_table_camera.py
	$(BIN)/python benchmarks/bench_heldout.py
	$(BIN)/python benchmarks/bench_demo_camera.py
	$(BIN)/python benchmarks/bench_crash.py
	$(BIN)/python benchmarks/fuzz_inputs.py

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "referee needs Python 3.11 or newer: set PYTHON=python3.11 (or newer)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || \
		{ echo "could not create $(VENV): on Debian/Ubuntu run: sudo apt install python3-venv"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis *.egg-info

# Two commands for a fresh machine: `make demo` (set up, run an episode on the embedded model)
# and `make test` (set up, run the tests). Both create .venv when it is missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean-venv

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and exactly: a looser request pulls a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# llama-cpp-python compiles from source the first time: on every core at once (cmake reads
	# CMAKE_BUILD_PARALLEL_LEVEL), where the default build uses one.
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/sandbox run public_spring_tasting --arch ga_tdp --model local/smollm2-135m \
		--background 2 --same-day --start 15:00 --seed 1 --out runs/demo --overwrite

test: $(STAMP)
	$(BIN)/pytest -q -n auto  # one worker per core (pytest-xdist)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/llm_concurrency.py --demo

clean-venv:
	rm -rf $(VENV)

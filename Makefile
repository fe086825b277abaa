# Two commands for a fresh machine: `make demo` (set up, run an episode on the embedded model)
# and `make test` (set up, run the tests). Both create .venv when it is missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean-venv

# llama-cpp-python as pyproject.toml pins it: the index has its source only, so it is compiled.
LLAMA_CPP := $(shell sed -n 's/.*"\(llama-cpp-python\)\[server\]\(==[0-9.]*\)".*/\1\2/p' pyproject.toml)
# What of it is compiled: llama.cpp's library and its CPU backend, with the flags the default
# build uses (GGML_NATIVE as it is: the model computes the same bits). Left out, because the
# Python package never loads them: the multimodal library (LLAVA_BUILD) and llama.cpp's "common"
# library for its own programs. And what is compiled is compiled in fewer compiler runs: libllama's
# files and ggml-base's C++ in a few unity units, the files that compute on tensors as they were
# (setup/llama_cpp_text_only.cmake says how and why). 36 build steps instead of 193, about 310-320 s
# of CPU instead of 420-440 for the text-only build alone, answers bit-identical (bench/HISTORY.md).
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/setup/llama_cpp_text_only.cmake
WHEELS := $(VENV)/wheels
NOT_COMPILED := site-packages/(torch|torchgen|functorch|transformers|sentence_transformers|sympy|sklearn|pip|setuptools)/|/tests?/

# uv installs the packages after torch: it resolves, downloads and unpacks about 100 of them in
# a fraction of pip's time (bench/first_minute.py), the same versions. It reads its own settings,
# not pip's: setup/uv_from_pip.py gives it the indexes, wheel folders and constraints pip has.
UV := uv==0.13.9

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip '$(UV)'
	# llama-cpp-python's wheel is compiled (on every core: cmake reads CMAKE_BUILD_PARALLEL_LEVEL)
	# in the background while torch downloads and installs; torch exactly: a looser request
	# pulls a multi-GB CUDA build. The build's output is shown only when it fails.
	( CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(BIN)/pip wheel --quiet --no-deps --wheel-dir $(WHEELS) '$(LLAMA_CPP)' \
	  > $(VENV)/llama-cpp-build.log 2>&1; echo $$? > $(VENV)/llama-cpp-build.status ) & \
	$(BIN)/pip install --quiet --no-compile torch==2.13.0; torch=$$?; wait; \
	if [ "$$(cat $(VENV)/llama-cpp-build.status)" != 0 ]; then \
	  cat $(VENV)/llama-cpp-build.log; echo "llama-cpp-python did not build"; exit 1; fi; \
	exit $$torch
	# the rest (torch, installed above, is left as it is)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --find-links $(WHEELS) \
	  $$($(BIN)/python setup/uv_from_pip.py) -e '.[dev]'
	# The bytecode of what runs, compiled once here on every core, so no command compiles it
	# (nor every command, in a shell with PYTHONDONTWRITEBYTECODE set): our packages (an
	# editable project is not compiled at install) and the installed ones. pip would compile
	# those one file at a time, on one core, as it installs them (bench/first_minute.py). Left
	# out: what no command imports unless asked for (torch, transformers and
	# sentence-transformers serve the minilm-torch embedder; sympy and scikit-learn come with
	# them), the installers, and the packages' own tests: more than half of the files.
	$(BIN)/python -m compileall -q -j 0 -x '$(NOT_COMPILED)' sandbox agents worlds tasks \
	  evaluation viewer $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
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

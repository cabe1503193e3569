# Set-up installs into .venv. torch is pinned so that pip takes the CPU wheel already on disk on the
# development machines, and PyPI's default (CUDA) build of the same version on a Linux box with a GPU;
# `make TORCH= setup` keeps whatever torch the environment already has.
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: setup test demo clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(if $(TORCH),$(BIN)/pip install -q "$(TORCH)")
	$(BIN)/pip install -q -e ".[test]"
	touch $@

test: setup
	$(BIN)/python -m pytest tests -q

demo: setup
	$(BIN)/python -m hfgrow.demo demo-out

clean:
	rm -rf $(VENV) demo-out build *.egg-info

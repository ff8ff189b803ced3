# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test venv bench clean lint

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip 2>/dev/null || true
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

# An agent turn with reasoning, a tool call and streaming: on the built-in emulator
# when no provider key is set, on the provider whose key is set otherwise.
demo: $(STAMP)
	$(BIN)/modelwire chat --tools demo --thinking medium "What is 17 times 23? Use the calculator."
	$(BIN)/python examples/agent.py

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python bench/codecs.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info

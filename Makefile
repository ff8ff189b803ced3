# Two commands on a fresh machine: `make demo` and `make test`.
# The venv's interpreter: PYTHON when given; else the distribution's own python3 when it is
# 3.11 or newer with venv (distributions build it with PGO and LTO: here the gateway spends
# ~20% less CPU per request under Debian's python3.11 than under pyenv's default build,
# bench/README.md), else the python3 on PATH. `make clean` first to change it.
PYTHON ?= $(shell /usr/bin/python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' \
            >/dev/null 2>&1 && echo /usr/bin/python3 || echo python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test test-agents test-compare test-cluster test-ui chaos venv bench clean lint docs mutation

# One line per step; pip's own output and progress bars on a terminal, quiet in logs.
PIP_QUIET = $$(test -t 1 || echo -q)

$(STAMP): pyproject.toml
	@echo "==> [1/3] virtualenv $(VENV) with $$($(PYTHON) -c 'import sys; print(sys.executable, sys.version.split()[0])')"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] upgrading pip"
	@$(BIN)/python -m pip install $(PIP_QUIET) --upgrade pip 2>/dev/null || true
	@echo "==> [3/3] installing modelwire (editable) with its test tools: about a minute the first time"
	@$(BIN)/python -m pip install $(PIP_QUIET) -e '.[dev]'
	@touch $(STAMP)
	@echo "==> ready: $(BIN)/modelwire"

venv: $(STAMP)

# An agent turn with reasoning, a tool call and streaming: on the built-in emulator
# when no provider key is set, on the provider whose key is set otherwise.
demo: $(STAMP)
	$(BIN)/modelwire chat --tools demo --thinking medium "What is 17 times 23? Use the calculator."
	$(BIN)/python examples/agent.py

test: $(STAMP)
	$(BIN)/python -m pytest

# The chaos suite at full scale (make test runs its short pass): hostile bytes, slow
# clients, a model-name flood, upstream faults under load, Redis frozen and killed.
chaos: $(STAMP)
	MODELWIRE_CHAOS=full $(BIN)/python -m pytest tests/chaos

# Claude Code and Codex CLI (npm, pinned, cached in .cache/agents) through the gateway.
test-agents: $(STAMP)
	MODELWIRE_TEST_AGENTS=1 $(BIN)/python -m pytest tests/agents

# Two `modelwire serve` instances behind nginx with Redis and PostgreSQL, as processes
# (docs/guides/teams-cluster.md; a minute or two, so not in `make test`).
test-cluster: $(STAMP)
	MODELWIRE_TEST_CLUSTER=1 $(BIN)/python -m pytest tests/cluster

# The status page (/ui) in headless Chromium (Debian's package, by path; MODELWIRE_CHROMIUM
# to use another) against a real `modelwire serve`; screenshots in tests/ui/screenshots/.
test-ui: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[ui-test]'
	MODELWIRE_TEST_UI=1 $(BIN)/python -m pytest tests/ui

# The wheel as users get it: built (python -m build), installed into a clean venv with no
# dev extras, then run offline (tests/packaging).
.PHONY: test-wheel
test-wheel: $(STAMP)
	MODELWIRE_TEST_WHEEL=1 $(BIN)/python -m pytest tests/packaging

# The four programs of docs/guides/compared.md, the LiteLLM and pydantic-ai ones included.
test-compare: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[compare]'
	$(BIN)/python -m pytest tests/compare

# ruff over everything; pyright strict over the public modules, basic over the rest
# ([tool.pyright] in pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/pyright

# The documentation site: reference pages and charts are generated while it builds
# (tools/mkdocs_hooks.py); it renders recorded figures, it never benchmarks.
$(VENV)/.installed-docs: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[docs]'
	@touch $@

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Mutation testing of the pure core, each module against its own tests (minutes; not in
# `make test`): scripts/mutation.py prints the score per module and the survivors.
mutation: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[mutation]'
	$(BIN)/python scripts/mutation.py

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python bench/codecs.py
	$(BIN)/python bench/agents.py

clean:
	rm -rf $(VENV) build dist site src/*.egg-info

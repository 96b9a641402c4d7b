# Two commands do all set-up on a fresh Debian machine: `make run` and `make test`.
# Browser: Debian's chromium (never Playwright's own browser download, which cannot work here), and
# its headless shell, the lighter browser a user may choose (the tests and the scale bench use both).
VENV ?= .venv
PY := $(VENV)/bin/python
CHROMIUM ?= $(or $(SANDBOX_CHROMIUM),/usr/bin/chromium)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup chromium venv node run test check docs docs-ref docs-check bench compat clean

setup: chromium venv

HEADLESS_SHELL := /usr/lib/chromium/chromium-headless-shell

# chromium is needed; the headless shell is installed when it can be (without it, its tests skip).
chromium:
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $(CHROMIUM)"; else \
	  echo "installing Debian chromium"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; fi
	@if [ -x "$(HEADLESS_SHELL)" ]; then echo "headless shell: $(HEADLESS_SHELL)"; else \
	  echo "installing Debian chromium-headless-shell"; \
	  ( $(SUDO) apt-get update -qq && \
	    $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell ) || \
	  echo "chromium-headless-shell not installed (optional: its tests skip)"; fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# MCP clients and servers nobody here wrote (pinned in node/package-lock.json), into node/node_modules:
# the MCP Inspector (its CLI mode is tested) and Playwright MCP (the bench's side-by-side).
node: node/node_modules/.installed

node/node_modules/.installed: node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

run: setup
	$(VENV)/bin/sandbox run all --agent reference

# Python may keep its bytecode (in __pycache__, ignored by git) even where the machine sets
# PYTHONDONTWRITEBYTECODE: the suite starts dozens of Python processes (the CLI, pytest sessions,
# MCP servers) that would each compile the project again, and pytest would rewrite every test
# module and plugin module again in each session.
test: setup node
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q

# Lint, format and types (configured in pyproject.toml); the same hooks are in .pre-commit-config.yaml.
check: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The documentation site (docs/, mkdocs.yml) into site/; --strict: a broken link or a page missing
# from the navigation fails the build.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# The pages generated from the code (docs/reference/, docs/benchmarks/index.md): rewrite them, or
# fail when the committed ones differ from what the code gives.
docs-ref: venv
	$(PY) scripts/docs_reference.py

docs-check: venv
	$(PY) scripts/docs_reference.py --check

bench: setup node
	$(PY) scripts/bench.py

# The framework compatibility suite: each agent framework in its own venv under .compat/ (pinned in
# scripts/compat/<framework>/requirements.txt, installed again only when that file changes) drives the
# controlled-form workflow over stdio and streamable HTTP with a scripted model; prints the matrix and
# writes scripts/compat/matrix.json.
compat: setup
	$(PY) scripts/compat/run.py

clean:
	rm -rf $(VENV) runs site .pytest_cache .mypy_cache .ruff_cache node/node_modules

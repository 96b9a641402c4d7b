# Two commands do all set-up on a fresh Debian machine: `make run` and `make test`.
# Browser: Debian's chromium (never Playwright's own browser download, which cannot work here).
VENV ?= .venv
PY := $(VENV)/bin/python
CHROMIUM ?= $(or $(SANDBOX_CHROMIUM),/usr/bin/chromium)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup chromium venv run test bench clean

setup: chromium venv

chromium:
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $(CHROMIUM)"; else \
	  echo "installing Debian chromium"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

run: setup
	$(VENV)/bin/sandbox run all --agent reference

test: setup
	$(PY) -m pytest -q

bench: setup
	$(PY) scripts/bench.py

clean:
	rm -rf $(VENV) runs .pytest_cache

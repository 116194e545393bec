# Proctor developer entry points. Every target builds or refreshes .venv itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Proctor's modules compiled once, not at every start: the tests start the CLI and servers
# hundreds of times, and where PYTHONDONTWRITEBYTECODE is set each start compiled ~340 modules.
unexport PYTHONDONTWRITEBYTECODE
SYSTEM_PACKAGES := bubblewrap util-linux mmdebstrap erofs-utils skopeo
# The web pages' tests drive Debian's Chromium with playwright (no browser download).
TEST_PACKAGES := chromium

.PHONY: demo test test-slow check bench system test-system venv clean format

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing Proctor and its dependencies into $(VENV) (a minute or two the first time)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

define install_packages
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "Proctor needs these Debian packages:$$missing"; \
	    echo "run: sudo apt-get install -y$$missing   then run make again"; exit 1; \
	  fi; \
	fi
endef

system:
	$(call install_packages,$(SYSTEM_PACKAGES))

test-system:
	$(call install_packages,$(SYSTEM_PACKAGES) $(TEST_PACKAGES))

demo: system $(STAMP)
	$(BIN)/proctor demo

check: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# Two pytest-xdist workers: most tests wait on sandboxed runs, so two keep a 2-core machine busy.
# Each worker's sandboxes run as their own slot uids (tests/conftest.py). PYTEST_WORKERS=0: serial.
PYTEST_WORKERS ?= 2

test: test-system check
	$(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) -m "not very_slow"

# Also builds the classic PhysioNet environment (Octave, R, a JDK, GHC: several minutes, a few GB).
test-slow: test-system check
	$(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS)

bench: system $(STAMP)
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

format: $(STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache

# memoryd: `make run` starts the daemon with the default local model; `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Quick start on a folder of notes: make run WORKSPACE=~/notes (default: the config file, else the data dir)
WORKSPACE ?=
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF

.PHONY: install run test lint typecheck bench system-deps node-deps clean

# editable_mode=compat puts the checkout on sys.path with a plain .pth line: setuptools' default editable finder
# is imported by every Python start-up in the venv (about 15 ms of each `memctl search` here)
$(BIN)/.installed: pyproject.toml client/pyproject.toml Makefile memoryd/store/fts5_topk.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./client -e '.[dev]' --config-settings editable_mode=compat
	@# a venv from before client/ was its own distribution: removing the old memoryd took memctl with it
	@[ -x $(BIN)/memctl ] || $(BIN)/python -m pip install --quiet --no-deps --force-reinstall -e ./client --config-settings editable_mode=compat
	touch $@

# byte-compiled up front (only changed files), as Python does not write them where PYTHONDONTWRITEBYTECODE is set
install: $(BIN)/.installed
	@$(BIN)/python -m compileall -q memoryd client/memoryd_client

run: install
	$(BIN)/memoryd run --prepare-model $(if $(WORKSPACE),--workspace $(WORKSPACE))

# Debian packages the tests need: Neovim (a msgpack-rpc client that is not ours), npm, Chromium and its driver (the web
# page's tests), and SQLite's headers, which bm25_topk (memoryd/store/fts5_topk.c) is built against; first, so that
# the install builds it.
system-deps:
	@pkgs=; command -v nvim >/dev/null 2>&1 || pkgs="$$pkgs neovim"; \
	  command -v npm >/dev/null 2>&1 || pkgs="$$pkgs npm"; \
	  [ -f /usr/include/sqlite3ext.h ] || pkgs="$$pkgs libsqlite3-dev"; \
	  command -v chromium >/dev/null 2>&1 || pkgs="$$pkgs chromium"; \
	  command -v chromedriver >/dev/null 2>&1 || pkgs="$$pkgs chromium-driver"; \
	  [ -z "$$pkgs" ] || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs >/dev/null; }

# Node 24 from the npm registry's node package (OpenClaw needs it; the system's node may be older), then the agent
# platforms the integrations are tested against and the OpenClaw plugin's build tools (package.json). `install`,
# not `ci`: npm leaves opencode-ai's other platforms' binaries out of the lock file, and `ci` then refuses it.
NODE24 := $(CURDIR)/tools/node/node_modules/.bin
tools/node/node_modules/.installed: tools/node/package.json tools/node/package-lock.json
	cd tools/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.installed: package.json package-lock.json client/memoryd_client/assets/openclaw/package.json tools/node/node_modules/.installed
	PATH="$(NODE24):$$PATH" npm install --no-audit --no-fund --loglevel=error
	touch $@

node-deps: node_modules/.installed

test: system-deps install node-deps
	$(BIN)/memoryd model prepare
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check memoryd client bench tests
	$(BIN)/ruff format --check memoryd client bench tests

# mypy over the daemon and the client, as pyproject.toml's [tool.mypy] sets it (strict on memoryd_client)
typecheck: install
	$(BIN)/mypy

bench: install
	$(BIN)/memoryd model prepare
	$(BIN)/python -m bench all

clean:
	rm -rf $(VENV) .cache .pytest_cache node_modules tools/node/node_modules

# runtasks — build, test and demo. `make test` is what CI runs on a fresh clone.
SHELL := /bin/bash
GO        ?= go
TOOLS     := $(CURDIR)/.tools
BD        := $(TOOLS)/bin/bd
BD_VERSION := 1.3.0
DOLT      := $(TOOLS)/bin/dolt
DOLT_VERSION := 2.2.0
BIN       := $(CURDIR)/bin/runtasks

# The pinned bd comes first on PATH for tests and the demo.
export PATH := $(TOOLS)/bin:$(PATH)
export BD_DISABLE_METRICS := 1

.PHONY: all build install test unit integration demo bd dolt e2e-tools chromium e2e lint bench fuzz clean

all: build

# runtasks is built statically (no cgo): it starts at every stop of every
# agent, and a static binary skips the dynamic loader. It is the only
# binary: the agents' hooks run it, so `go install` is a complete install
# and upgrade.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/runtasks

install:
	CGO_ENABLED=0 $(GO) install ./cmd/runtasks

# bd v1.3.0 from the tools module in tools/beads (its own go.mod pins it).
# Skipped when the binary there already reports the version.
bd:
	@if [ -x "$(BD)" ] && HOME=$$(mktemp -d) "$(BD)" version 2>/dev/null | grep -q "version $(BD_VERSION)"; then \
		echo "bd $(BD_VERSION): $(BD)"; \
	else \
		echo "building bd $(BD_VERSION) into $(BD) (first time: several minutes)"; \
		mkdir -p $(TOOLS)/bin && cd tools/beads && \
		CGO_ENABLED=1 $(GO) build -tags gms_pure_go -ldflags "-s -w" -o "$(BD)" github.com/steveyegge/beads/cmd/bd && \
		HOME=$$(mktemp -d) "$(BD)" version; \
	fi

# The dolt CLI at the version bd v1.3.0 requires (github.com/dolthub/dolt/go
# v0.40.5-0.20260715172757-a6690826d767 in tools/beads/go.sum, which prints
# 2.2.0), from the tools module in tools/dolt. The server-mode tests start a
# `dolt sql-server` with it (docs/scale.md). Skipped when the binary there
# already reports the version. gms_pure_go: no ICU, libc only, as for bd.
dolt:
	@if [ -x "$(DOLT)" ] && HOME=$$(mktemp -d) "$(DOLT)" version 2>/dev/null | grep -q "version $(DOLT_VERSION)"; then \
		echo "dolt $(DOLT_VERSION): $(DOLT)"; \
	else \
		echo "building dolt $(DOLT_VERSION) into $(DOLT) (first time: several minutes)"; \
		mkdir -p $(TOOLS)/bin && cd tools/dolt && \
		CGO_ENABLED=1 $(GO) build -tags gms_pure_go -ldflags "-s -w" -o "$(DOLT)" github.com/dolthub/dolt/go/cmd/dolt && \
		HOME=$$(mktemp -d) "$(DOLT)" version; \
	fi

# The real Claude Code, Codex and Gemini CLIs for the end-to-end suite (e2e/),
# at the versions pinned by e2e/package-lock.json, installed with `npm ci`
# into .tools/e2e (git-ignored). Skipped when that lock is already installed
# and the three CLIs run. Only the npm registry is used (Claude Code and Codex
# ship their native binaries in platform packages; Gemini CLI is one node
# bundle). GEMINI_CLI_NO_RELAUNCH: gemini --version without its child node.
E2E_TOOLS := $(TOOLS)/e2e
E2E_CLIS  := claude codex gemini
e2e-tools:
	@if cmp -s e2e/package-lock.json "$(E2E_TOOLS)/package-lock.json" && \
		(for c in $(E2E_CLIS); do GEMINI_CLI_NO_RELAUNCH=1 "$(E2E_TOOLS)/node_modules/.bin/$$c" --version >/dev/null 2>&1 || exit 1; done); then \
		for c in $(E2E_CLIS); do echo "e2e tools: $$c $$(GEMINI_CLI_NO_RELAUNCH=1 "$(E2E_TOOLS)/node_modules/.bin/$$c" --version)"; done; \
	else \
		echo "installing the pinned agent CLIs into $(E2E_TOOLS)"; \
		mkdir -p "$(E2E_TOOLS)" && cp e2e/package.json e2e/package-lock.json "$(E2E_TOOLS)/" && \
		npm ci --prefix "$(E2E_TOOLS)" --no-audit --no-fund --loglevel=error && \
		for c in $(E2E_CLIS); do GEMINI_CLI_NO_RELAUNCH=1 "$(E2E_TOOLS)/node_modules/.bin/$$c" --version || exit 1; done; \
	fi

# Debian's Chromium for the browser test of runtasks report (e2e/chromium),
# installed only when /usr/bin/chromium is missing (CI runs as root; else
# sudo is used when there).
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "installing Debian's chromium"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium >/dev/null && \
		"$(CHROMIUM)" --version; \
	fi

# Only the end-to-end suite (real CLIs against fake model APIs, and the
# report in headless Chromium).
e2e: bd e2e-tools chromium
	$(GO) test -count=1 -v -run 'IntegrationE2E' ./e2e

# Prints test names and results, and the whole output of every failing
# test: a test's lines are kept under its name (parallel tests interleave,
# headed by "=== RUN/CONT/NAME name") and printed at its "--- FAIL"; the
# indented lines after a "--- FAIL" (a subtest's log) are printed too.
FAILED_OUTPUT = /^=== (RUN|CONT|NAME|PAUSE) / {cur=$$3; f=0} \
	/^[ \t]*--- FAIL: / {print; printf "%s", buf[$$3]; delete buf[$$3]; f=1; next} \
	/^[ \t]*--- (PASS|SKIP): / {delete buf[$$3]; f=0} \
	!f && cur != "" && !/^=== / && !/^[ \t]*--- / {buf[cur] = buf[cur] $$0 "\n"} \
	f || /^(=== RUN|--- |ok |FAIL|PASS|panic)/ || /^[ \t]+[^ \t]+_test\.go/

# Unit, script and real-bd integration tests. The integration tests run
# first and verbosely, so their names show in the output.
test: bd dolt e2e-tools chromium lint
	$(GO) test -count=1 -timeout 30m -v -run 'Integration' ./... 2>&1 | awk '$(FAILED_OUTPUT)' ; test $${PIPESTATUS[0]} -eq 0
	$(GO) test -count=1 -timeout 30m -skip 'Integration' ./...

unit:
	$(GO) test -skip 'Integration' ./...

integration: bd dolt e2e-tools chromium
	$(GO) test -count=1 -v -run 'Integration' ./...

demo: bd build
	@RUNTASKS=$(BIN) scripts/demo.sh

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# One run of every benchmark; the figures are ratios (docs/benchmarks.md).
# The first run builds a 1,000-issue bd store, cached in .tools/bench.
BENCH ?= .
bench: bd dolt build
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 60m ./...

# Each fuzz target for FUZZTIME (-fuzz takes one target per run).
FUZZTIME ?= 10s
fuzz:
	@set -e; for dir in $$($(GO) list -f '{{.Dir}}' ./...); do \
		for t in $$(cat $$dir/*_test.go 2>/dev/null | sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p'); do \
			echo "== $$t in $$dir ($(FUZZTIME))"; \
			(cd $$dir && $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) .); \
		done; \
	done

clean:
	rm -rf bin

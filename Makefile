# runtasks — build, test and demo. `make test` is what CI runs on a fresh clone.
SHELL := /bin/bash
GO        ?= go
TOOLS     := $(CURDIR)/.tools
BD        := $(TOOLS)/bin/bd
BD_VERSION := 1.3.0
BIN       := $(CURDIR)/bin/runtasks

# The pinned bd comes first on PATH for tests and the demo.
export PATH := $(TOOLS)/bin:$(PATH)
export BD_DISABLE_METRICS := 1

.PHONY: all build install test unit integration demo bd lint bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/runtasks

install:
	$(GO) install ./cmd/runtasks

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

# Unit, script and real-bd integration tests. The integration tests run
# first and verbosely, so their names show in the output.
test: bd lint
	$(GO) test -count=1 -v -run 'Integration' ./... 2>&1 | grep -E '^(=== RUN|--- |ok |FAIL|PASS|panic|\s+\S+_test.go)' ; test $${PIPESTATUS[0]} -eq 0
	$(GO) test -count=1 -skip 'Integration' ./...

unit:
	$(GO) test -skip 'Integration' ./...

integration: bd
	$(GO) test -count=1 -v -run 'Integration' ./...

demo: bd build
	@RUNTASKS=$(BIN) scripts/demo.sh

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench: bd build
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

fuzz:
	@echo "no fuzz targets yet"

clean:
	rm -rf bin

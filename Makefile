# mcprt — build, test, fuzz, bench, lint.
GO            ?= go
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME      ?= 20000x
LONGFUZZTIME  ?= 2000000x
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS       := -X main.version=$(VERSION)
# every Fuzz function of the module as package-dir:FuzzName (go test -fuzz takes one package and one target)
FUZZ_TARGETS  := $(shell grep -rHo --include='*_test.go' --exclude-dir=testdata --exclude-dir=compare '^func Fuzz[A-Za-z0-9_]*' . 2>/dev/null | sed -E 's|^\./(.*)/[^/]*:func (Fuzz.*)|\1:\2|' | sort)

.PHONY: all build test vet unit browser fuzz-short fuzz bench lint run clean

all: build

## build: compile the mcprt binary into bin/ (static: no libc, a smaller resident set)
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/mcprt ./cmd/mcprt

## test: what CI runs — vet, every test with -race, each benchmark once, a short fuzz pass, the conformance suite.
## Needs Go 1.26, Node >= 20 and npm: the TypeScript SDK client tests (cmd/mcprt) and the conformance suite install
## their pinned npm packages once, into ~/.cache/mcprt (network on the first run only).
test: node-check vet unit fuzz-short conformance

.PHONY: node-check
## node-check: fail early, saying what to install, when node (>= 20) or npm is missing (make test would otherwise
## skip the TypeScript client tests and fail in the conformance suite)
node-check:
	@command -v node >/dev/null 2>&1 || { echo "make test needs Node.js >= 20 (node) for the TypeScript SDK client tests and the conformance suite; install it (e.g. apt-get install nodejs npm)" >&2; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "make test needs npm (it installs the pinned TypeScript SDK and conformance suite once, into ~/.cache/mcprt); install npm" >&2; exit 1; }
	@node -e 'const m=+process.versions.node.split(".")[0]; if (m < 20) { console.error("make test needs Node.js >= 20, found " + process.version); process.exit(1) }'

vet:
	$(GO) vet ./...

## unit: every test with -race (a package counts as hung after 20 min, not 10: the machine may be loaded); the console's browser tests must run when Chromium is there (make browser installs it)
unit: browser
	MCPRT_REQUIRE_BROWSER=$$($(HAVE_CHROMIUM) && echo 1 || echo 0) $(GO) test -race -count=1 -timeout=20m ./...
	$(GO) test -short -run='^$$' -bench=. -benchtime=1x ./...

HAVE_CHROMIUM := { command -v chromium || command -v chromium-headless-shell; } >/dev/null 2>&1

## browser: headless Chromium for the console's browser tests: Debian's chromium, installed when absent (as root, or with sudo)
browser:
	@if ! $(HAVE_CHROMIUM); then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			echo "installing chromium for the console's browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true; \
		elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then \
			echo "installing chromium for the console's browser tests (sudo)"; \
			sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true; \
		fi; \
	fi; \
	if ! $(HAVE_CHROMIUM); then \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
		echo "!!! Chromium could not be installed: the console's browser tests WILL BE SKIPPED"; \
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	fi

## fuzz-short: every fuzz target of the module for $(FUZZTIME) inputs (an iteration count, not wall time: a loaded machine cannot make it fail)
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in ./$$pkg for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) ./$$pkg || exit 1; \
	done

## fuzz: every fuzz target for $(LONGFUZZTIME) inputs (an iteration count too)
fuzz:
	$(MAKE) fuzz-short FUZZTIME=$(LONGFUZZTIME)

## bench: every benchmark with allocations (bench/: parser, dispatch, handshake, listing, validation, stdio)
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

.PHONY: conformance

## conformance: the official MCP conformance suite (0.1.16 and 0.2.0-alpha.12, pinned in conformance/) against
## bin/mcprt over Streamable HTTP; fails when any scenario fails. Node 22 and the suites are installed once into
## ~/.cache/mcprt/conformance. CONFORMANCE_TRANSPORT=http (mcprt --http, the default) or bridge (supergateway in front of the stdio binary)
CONFORMANCE_TRANSPORT ?= http
conformance: build
	CONFORMANCE_BIN=bin/mcprt CONFORMANCE_TRANSPORT=$(CONFORMANCE_TRANSPORT) conformance/run.sh

.PHONY: bench-e2e bench-compare

## bench-e2e: build mcprt, run it in TEST mode over stdio, print one line per figure (E2EFLAGS: see bench/README.md)
bench-e2e:
	$(GO) run ./bench/cmd/e2e $(E2EFLAGS)

## bench-e2e-http: the same over Streamable HTTP (mcprt --http)
.PHONY: bench-e2e-http
bench-e2e-http:
	$(GO) run ./bench/cmd/e2ehttp $(E2EHTTPFLAGS)

## bench-compare: mcprt beside the official Go SDK, mcp-go and a bare loop, interleaved rounds, medians, README table
bench-compare:
	cd bench/compare && $(GO) run ./cmd/compare $(COMPAREFLAGS)

## lint: go vet and staticcheck (pinned)
lint: vet
	$(GO) run $(STATICCHECK) ./...

## run: start the server on stdin/stdout (nothing but protocol on stdout)
run:
	@CGO_ENABLED=0 $(GO) run -ldflags '$(LDFLAGS)' ./cmd/mcprt

clean:
	rm -rf bin

# hadrill — build, test, benchmark and demo. Run as root on Debian 12:
#   make demo   installs what is missing, builds, deploys the galera3 lab, prints its status
#   make test   installs what is missing, runs unit, fuzz and integration tests (real servers)
SHELL      := /bin/bash
GO         ?= go
BIN        := bin/hadrill
VERSION    := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -s -w -X main.version=$(VERSION)
DEBS       := mariadb-server mariadb-client galera-4 mariadb-backup socat rsync iproute2 procps haproxy iptables sysbench
GOFILES    := $(shell find . -name '*.go' -not -path './bin/*') go.mod go.sum $(shell find internal -name '*.yaml' -o -name '*.tmpl' -o -name '*.cnf')

.PHONY: all build deps test unit fuzz integration bench demo clean

all: build

build: $(BIN)

$(BIN): $(GOFILES)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hadrill

# Debian packages hadrill drives (the real engine, never a stand-in).
deps:
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install packages" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@$(GO) mod download

test: deps build unit fuzz integration

unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./internal/... ./cmd/...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=15s -fuzzminimizetime=2s ./internal/spec

integration: build
	HADRILL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 15m -v ./integration/ 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic|\s+\S+_test.go)' ; exit $${PIPESTATUS[0]}

bench: deps build
	$(GO) run ./bench -bin $(CURDIR)/$(BIN)

demo: deps build
	./$(BIN) up
	@echo
	@echo "The lab runs. Try:  ./$(BIN) status   ./$(BIN) sql db1   ./$(BIN) stop db2; ./$(BIN) start db2"
	@echo "Tear it down with:  ./$(BIN) down"

clean:
	rm -rf bin

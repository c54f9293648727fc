# hadrill — build, test, benchmark and demo. Run as root on Debian 12:
#   make demo   installs what is missing, builds, deploys the galera3 lab, prints its status
#   make test   installs what is missing, runs unit, fuzz and integration tests (real servers)
SHELL      := /bin/bash
GO         ?= go
BIN        := bin/hadrill
VERSION    := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -s -w -X github.com/hadrill/hadrill/internal/buildinfo.Version=$(VERSION)
# Debian packages hadrill drives (the real engine, never a stand-in): every one in the list that
# `hadrill preflight` checks remote hosts against, each with the roles of the hosts that need it.
DEBS       := $(shell sed -e 's/\#.*//' internal/preflight/packages.txt | awk 'NF { print $$1 }')
GOTPC_VERSION := $(shell sed -n 's/^const Version = "\(.*\)"/\1/p' internal/workload/tpcc/tpcc.go)
GOFILES    := $(shell find . -name '*.go' -not -path './bin/*') go.mod go.sum $(shell find internal -name '*.yaml' -o -name '*.tmpl' -o -name '*.cnf')

.PHONY: all build deps debs gomods test modules-and-build checks-beside unit lint unit-tests unit-tests-timed unit-tests-untimed fuzz integration bench studies demo clean

all: build

build: $(BIN)

$(BIN): $(GOFILES)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hadrill

# deps: the Debian packages (debs) and the Go modules and tools (gomods).
deps: debs gomods

debs:
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install packages" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

gomods:
	@$(GO) mod download
	@# go-tpc (TPC-C, hadrill bench tpcc) beside hadrill, built from its Go module at the version internal/workload/tpcc names
	@test -x bin/go-tpc || { echo "installing go-tpc $(GOTPC_VERSION)"; GOBIN=$(CURDIR)/bin $(GO) install github.com/pingcap/go-tpc/cmd/go-tpc@$(GOTPC_VERSION); }

# The packages install while the Go code is fetched and built (neither needs the other: on a fresh
# machine that halves the time before the first test); the unit tests that time something start once
# both are done, since some drive iptables and processes. The other unit tests (some drive fio), the
# vetting and the fuzzing, which time nothing, run at the lowest CPU priority beside the integration
# tests, whose first tests (run one at a time) leave a core partly idle; what they print is kept in
# test-logs/checks.log and shown when they fail.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target debs modules-and-build
	@$(MAKE) --no-print-directory unit-tests-timed
	@$(MAKE) --no-print-directory -j2 integration checks-beside

modules-and-build:
	@$(MAKE) --no-print-directory gomods
	@$(MAKE) --no-print-directory build

checks-beside:
	@mkdir -p test-logs
	@if nice -n 19 $(MAKE) --no-print-directory unit-tests-untimed lint fuzz > test-logs/checks.log 2>&1; \
	then echo "the other unit tests, lint and fuzzing passed (beside the integration tests; test-logs/checks.log)"; \
	else cat test-logs/checks.log; echo "the other unit tests, lint or fuzzing FAILED (above; test-logs/checks.log)" >&2; exit 1; fi

# staticcheck with every check, pinned (fetched through the module proxy like every Go dependency).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

unit: lint unit-tests

lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) -checks all ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy" >&2; exit 1; }

unit-tests:
	$(GO) test -count=1 ./internal/... ./cmd/...

# The unit tests that time something (a watch's window, a cancelled command's reply, a kernel thread judged
# at once, a large history within its bound, a process seen paused or ended within a deadline): make test
# runs them first, alone; the others, which time nothing, beside the integration tests at the lowest CPU
# priority, with the vetting and the fuzzing.
TIMED_UNITS := ./internal/lb ./internal/supervise ./internal/host ./internal/keeper ./internal/consistency \
	./internal/provider/ssh ./internal/chaos ./internal/state

unit-tests-timed:
	$(GO) test -count=1 $(TIMED_UNITS)

unit-tests-untimed:
	$(GO) test -count=1 $$($(GO) list ./internal/... ./cmd/... | grep -v -x -F $(foreach p,$(TIMED_UNITS),-e github.com/hadrill/hadrill/$(patsubst ./%,%,$(p))))

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=100000x -fuzzminimizetime=500x ./internal/spec
	$(GO) test -run='^$$' -fuzz=FuzzParseMessages -fuzztime=100000x -fuzzminimizetime=500x ./internal/netem

# The integration tests, with go test -v's telling lines as they come and, at the end, all a failed test printed.
integration: build
	HADRILL_BIN=$(CURDIR)/$(BIN) HADRILL_TEST_LOGS=$${HADRILL_TEST_LOGS:-$(CURDIR)/test-logs} $(GO) test -count=1 -p 1 -parallel 64 -timeout 30m -json ./integration/ ./internal/provider/ssh/ 2>&1 | python3 .ci/testlog.py ; exit $${PIPESTATUS[0]}

bench: deps build
	$(GO) run ./bench -bin $(CURDIR)/$(BIN)

# Every runnable study at STUDY_SCALE (quick; full: the documents' protocols, about 33 hours here), in
# studies/SCALE/: the result (NAME.json, its exit status in NAME.rc), the report (NAME.html), every
# finding (findings.txt) and the campaign's tally (tally.txt, `hadrill study tally --rejudge`: the claims
# of every study's newest run at the scale, judged by today's study files, counted by verdict, the share
# still inconclusive first, printed last). Each runs a two-stage design (--decide): the scale's rounds are the pilot, then
# the rounds its claims need to decide, at most STUDY_BUDGET of rounds each (the pilot's included; give
# full scale a budget of hours). A study whose result there ran to the end at that scale is kept, not run
# again, and one that stopped before its end goes on from its last complete round (study run --resume;
# STUDY_AGAIN=1 runs every one anew), so a campaign of many hours goes on where it stopped;
# STUDIES="a b" runs only those. Interrupted (Ctrl-C, TERM, HUP), it stops once the study under way has
# put its labs away, not going on to the next.
STUDY_SCALE  ?= quick
STUDY_BUDGET ?= 10m
STUDIES      ?=
studies: deps build
	@mkdir -p studies/$(STUDY_SCALE)
	@d=studies/$(STUDY_SCALE); rm -f $$d/findings.txt; failed=; unreproduced=; stop=; trap 'stop=1' INT TERM HUP; \
	names="$(STUDIES)"; [ -n "$$names" ] || names=$$($(BIN) study list -o json | python3 -c 'import json,sys; print(" ".join(x["name"] for x in json.load(sys.stdin) if not x.get("needs")))'); \
	for s in $$names; do \
		if [ -n "$$stop" ]; then echo "make studies: interrupted before $$s" >&2; exit 130; fi; \
		if [ -z "$(STUDY_AGAIN)" ] && [ -f $$d/$$s.rc ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; sys.exit(r["scale"] != sys.argv[2] or r["interrupted"])' $$d/$$s.json $(STUDY_SCALE) 2>/dev/null; then \
			echo "$$s: kept from an earlier run ($$d/$$s.json; STUDY_AGAIN=1 runs it again)"; rc=$$(cat $$d/$$s.rc); \
		else \
			resume=; [ -n "$(STUDY_AGAIN)" ] || resume=$$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["result"]; print(j["run_id"]) if r["scale"] == sys.argv[2] and r["interrupted"] else sys.exit(1)' $$d/$$s.json $(STUDY_SCALE) 2>/dev/null); \
			if [ -n "$$resume" ]; then \
				echo "$$s: going on from run $$resume, which stopped before its end"; \
				$(BIN) study run $$s --resume $$resume -o json > $$d/$$s.json.new; rc=$$?; \
				if [ $$rc -eq 2 ]; then echo "$$s: run $$resume cannot be resumed (above): running the study anew"; resume=; rm -f $$d/$$s.json.new; else mv $$d/$$s.json.new $$d/$$s.json; fi; \
			fi; \
			[ -n "$$resume" ] || { $(BIN) study run $$s --scale $(STUDY_SCALE) --decide --budget $(STUDY_BUDGET) -o json > $$d/$$s.json; rc=$$?; }; \
			echo $$rc > $$d/$$s.rc; \
			if [ -n "$$stop" ] && [ $$rc -gt 128 ]; then echo "make studies: interrupted in $$s; make studies goes on from its last complete round" >&2; exit 130; fi; \
			if [ -n "$$stop" ]; then echo "make studies: stopped after $$s ended (exit $$rc); make studies goes on from there" >&2; exit 130; fi; \
		fi; \
		if [ $$rc -eq 4 ]; then unreproduced="$$unreproduced $$s"; elif [ $$rc -ne 0 ]; then failed="$$failed $$s"; fi; \
		id=$$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' $$d/$$s.json 2>/dev/null) || continue; \
		[ -f $$d/$$s.html ] && [ $$d/$$s.html -nt $$d/$$s.json ] || $(BIN) study report $$id -o $$d/$$s.html; \
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2] + ": " + r["result"]["finding"] + "\n")' $$d/$$s.json $$s >> $$d/findings.txt; \
	done; \
	echo "every study's finding: $$d/findings.txt; the campaign (every study's newest run at $(STUDY_SCALE) scale, earlier sittings' too): $$d/tally.txt"; \
	$(BIN) study tally --scale $(STUDY_SCALE) --rejudge > $$d/tally.txt && cat $$d/tally.txt; \
	if [ -n "$$unreproduced" ]; then echo "studies that ran to the end without reproducing every claim (exit 4):$$unreproduced"; fi; \
	if [ -n "$$failed" ]; then echo "studies that stopped early:$$failed" >&2; exit 1; fi

# The main job: deploy galera3 behind its load balancer, measure a short sysbench sweep through it,
# commit latency, then a failover drill (kill -9 of the writer under traffic, acknowledged-write
# audit); write report.html. The lab keeps running for exploration.
DEMO_THREADS ?= 1,4,16
DEMO_TIME    ?= 20
demo: deps build
	./$(BIN) up --name demo
	./$(BIN) bench sysbench --name demo --threads $(DEMO_THREADS) --time $(DEMO_TIME) --tables 4 --table-size 10000 -o json > .demo-run.json
	./$(BIN) bench commit-latency --name demo --count 1000 --target all,lb -o json >> .demo-run.json
	./$(BIN) drill failover --name demo -o json >> .demo-run.json
	./$(BIN) report $$(sed -n 's/.*"run_id": "\(.*\)".*/\1/p' .demo-run.json) -o report.html
	@rm -f .demo-run.json
	@echo
	@echo "report: $(CURDIR)/report.html (open it in a browser)"
	@echo "the lab 'demo' keeps running. Try:  ./$(BIN) status   ./$(BIN) sql lb   ./$(BIN) stop db1; ./$(BIN) status"
	@echo "tear it down with:                  ./$(BIN) down --name demo"

clean:
	rm -rf bin

# shardbench — build, demo and test. `make demo` and `make test` are the two set-up
# commands the README promises work on a fresh machine.

SHELL   := /bin/bash
GO      ?= go
BUILD   := $(CURDIR)/.build
BIN     := $(CURDIR)/bin/shardbench
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The binary is built for this machine's x86-64 level: v3 (AVX2, BMI2, FMA) where the CPU
# has it, about 3% less CPU than v1 for Black Friday (docs/simulator.md#speed). For a
# binary to copy to older CPUs: make build GOAMD64=v1. Results are the same at either
# level (TestSimulatedResultsReproduceAcrossRunsAndBuilds builds both and compares).
GOAMD64 ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw bmi2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && echo v3 || echo v1)

.PHONY: all build demo test test-kubernetes unit vet fuzz fuzz-short fuzz-keep bench bench-client pgo fidelity clean

include testenv/cassandra/cassandra.mk
include testenv/ferretdb/ferretdb.mk

all: build

build:
	GOAMD64=$(GOAMD64) $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/shardbench

## demo: the main job on the embedded default backend (no database needed).
demo: build
	$(BIN) run scenarios/black-friday.yaml --out results/demo-$$(date +%Y%m%d-%H%M%S)

## test: vet, unit tests, and every integration test whose server the project starts itself
## (3-node Cassandra, PostgreSQL + FerretDB, Java HdrHistogram, Chromium), stopped at the end.
## A missing server is a failure, never a skip (SHARDBENCH_INTEGRATION=require).
test: vet test-kubernetes fuzz-short
	testenv/with-servers.sh $(GO) test -count=1 -timeout 70m ./...

## test-kubernetes: the Kubernetes manifests (docker/kubernetes), decoded strictly into the
## Kubernetes API types by a test in a module of its own (so go.mod does not carry them);
## no cluster needed.
test-kubernetes:
	cd docker/kubernetes && $(GO) vet ./... && $(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

## unit: tests that need no server (integration tests skip).
unit:
	$(GO) test -count=1 ./...

## fuzz: every fuzz target for FUZZTIME each (longer: make fuzz FUZZTIME=10m). A failing
## input is written under the package's testdata/fuzz and then runs with every `go test`;
## the inputs found interesting stay in Go's cache until `make fuzz-keep` copies them there.
## Each target is PACKAGE:NAME:EXECS, EXECS being its short budget (about 5 s here).
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./internal/yamlx:FuzzUnmarshal:20000 \
	./internal/scenario:FuzzParse:8000 \
	./internal/gate:FuzzParseBytes:20000 \
	./internal/design:FuzzLoad:1500 \
	./internal/results:FuzzReadDir:1000
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$(FUZZTIME); \
		[ "$$budget" = short ] && budget=$${rest#*:}x; \
		echo "fuzz $$name ($$pkg) for $$budget"; \
		$(GO) test $$pkg -run XXX -fuzz "^$$name\$$" -fuzztime $$budget -fuzzminimizetime 5s; \
	done

## fuzz-keep: copy the corpus the fuzz targets found (Go's cache) into testdata/fuzz.
fuzz-keep:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; \
		src=$$($(GO) env GOCACHE)/fuzz/github.com/shardbench/shardbench/$${pkg#./}/$$name; \
		[ -d "$$src" ] || continue; \
		mkdir -p $$pkg/testdata/fuzz/$$name && cp -n $$src/* $$pkg/testdata/fuzz/$$name/; \
		echo "$$pkg/testdata/fuzz/$$name: $$(ls $$pkg/testdata/fuzz/$$name | wc -l) inputs"; \
	done

## fuzz-short: every fuzz target for its short budget of executions, as part of `make
## test`. A count, not a duration: Go 1.26's fuzzing coordinator can fail a target with a
## bare "context deadline exceeded" when -fuzztime's deadline meets a worker slowed by a
## busy machine (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline.
fuzz-short:
	$(MAKE) fuzz FUZZTIME=short

## bench: the benchmarks behind the speed figures in the README, compiled with the
## profile the shipped binary is built with (`go test` does not apply default.pgo itself).
bench:
	GOAMD64=$(GOAMD64) $(GO) test -pgo=$(CURDIR)/cmd/shardbench/default.pgo -run XXX -bench . -benchmem ./...

## bench-client: what one operation costs the client: shardbench beside a bare gocql loop
## and (when installed) latte and cassandra-stress against one local Cassandra node it
## starts on 127.0.0.4 and stops, at 5,000/s and at the node's saturation, client CPU per
## operation and achieved rate side by side (testenv/bench-client.sh; settings there;
## about 15 minutes).
bench-client:
	testenv/bench-client.sh

## pgo: refresh cmd/shardbench/default.pgo, the CPU profile `go build` optimises the
## binary with (profile-guided optimisation; 5-7% faster placement): `plan`
## and a simulated run of black-friday.yaml, profiled on a build without it.
pgo:
	rm -rf $(BUILD)/pgo && mkdir -p $(BUILD)/pgo
	$(GO) build -pgo=off -o $(BUILD)/pgo/shardbench ./cmd/shardbench
	$(BUILD)/pgo/shardbench plan scenarios/black-friday.yaml --out $(BUILD)/pgo/plan --cpuprofile $(BUILD)/pgo/plan.prof
	$(BUILD)/pgo/shardbench run scenarios/black-friday.yaml --quiet --out $(BUILD)/pgo/run --cpuprofile $(BUILD)/pgo/run.prof
	$(GO) tool pprof -proto $(BUILD)/pgo/plan.prof $(BUILD)/pgo/run.prof > cmd/shardbench/default.pgo

## fidelity: the long comparison of the simulator with a real 3-node Cassandra
## (docs/simulator.md#fidelity): scenarios/fidelity.yaml on SHARDBENCH_CASSANDRA (default:
## the cluster `make cassandra-up3` starts), holding the tests' lock on that cluster.
FIDELITY_HOSTS ?= 127.0.0.1,127.0.0.2,127.0.0.3
fidelity: build
	flock $${TMPDIR:-/tmp}/shardbench-itest-cassandra.lock $(BIN) fidelity scenarios/fidelity.yaml \
		--target "cassandra://$${SHARDBENCH_CASSANDRA:-$(FIDELITY_HOSTS)}?dc=dc1" --recreate \
		--out results/fidelity-$$(date +%Y%m%d-%H%M%S) $(FIDELITY_ARGS)

clean:
	rm -rf bin

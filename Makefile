# fluss-sidecar: build, run, test. `make help` lists every target; the
# text after "##" on a target's line is its entry there.
#   make run    start a local ZooKeeper (Debian package) and the sidecar on 127.0.0.1:9123
#               (its tablet-server endpoint on 127.0.0.1:9124), metrics and probes on 127.0.0.1:9249
#   make hdfs   start an HDFS minicluster on 127.0.0.1:9000 for make run REMOTE_DATA_DIR=hdfs://127.0.0.1:9000/fluss
#   make check  the fast loop: gofmt, go vet, staticcheck, go test -short (no root, no servers)
#   make test   install what is missing, then run every test against real servers

GO        ?= go
BIN       := bin/fluss-sidecar
ZKRUN     := bin/zkrun
DATA_DIR  ?= $(CURDIR)/data
ZK_PORT   ?= 2181
# Set ZK_ADDRESS to use a ZooKeeper you run yourself; make run then starts none.
ZK_ADDRESS ?=
LISTEN    ?= 127.0.0.1:9123
# The tablet-server endpoint GET_METADATA names beside LISTEN.
TABLET_LISTEN ?= 127.0.0.1:9124
METRICS_PORT ?= 9249
# make run's remote.data.dir; unset: file://$(DATA_DIR)/remote.
REMOTE_DATA_DIR ?=
# make hdfs: the NameNode's RPC port of the HDFS minicluster on 127.0.0.1.
HDFS_PORT ?= 9000
# A count, not a duration: Go 1.26's fuzzer can report a spurious "context
# deadline exceeded" when a duration budget ends mid-input (go.dev/issue/75804).
FUZZTIME  ?= 4000x
BOOTSTRAP ?= 127.0.0.1:9123
PROTOC_GEN_GO_VERSION := v1.36.12
# staticcheck 2026.2.2, built with this Go into .deps (no root) by make lint.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := .deps/go-tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
# Stamped into the binary (fluss-sidecar version, the start-up log, build_info).
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_TIME ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := github.com/fluss-sidecar/fluss-sidecar/buildinfo
LDFLAGS    := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).buildTime=$(BUILD_TIME)

.PHONY: all help build run hdfs check lint test fuzz bench bench-producers bench-scale lincheck soak generate deps test-deps vet fmt clean clean-data compat compat-embedded fluss-client fluss-rs-client fluss-rs-embedded pyfluss-client pyfluss-embedded embedded-startup image flink

all: build ## the same as make build

# help prints each target's "##" text, and fails when a .PHONY target has
# none (a target declared but not described, or declared and never written).
help: ## this list
	@awk -F'[: ]+## ' ' \
		/^\.PHONY:/ { for (i = 2; i <= split($$0, w, " "); i++) phony[w[i]] = 1; next } \
		/^[a-zA-Z0-9_-]+:.*## / { split($$1, t, ":"); printf "  make %-18s %s\n", t[1], $$2; seen[t[1]] = 1 } \
		END { for (p in phony) if (!(p in seen)) { print "make help: .PHONY target without a ## line: " p > "/dev/stderr"; bad = 1 } exit bad }' $(MAKEFILE_LIST)

build: ## bin/fluss-sidecar, bin/fluss-test-cluster and bin/zkrun, stamped with version and commit
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/fluss-sidecar
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/fluss-test-cluster ./cmd/fluss-test-cluster
	$(GO) build -o $(ZKRUN) ./internal/zktest/cmd/zkrun

run: deps build ## a local ZooKeeper and the sidecar on 127.0.0.1:9123 (first time: root to apt-get ZooKeeper)
	REMOTE_DATA_DIR="$(REMOTE_DATA_DIR)" ZK_ADDRESS="$(ZK_ADDRESS)" ZK_PORT=$(ZK_PORT) DATA_DIR="$(DATA_DIR)" LISTEN=$(LISTEN) TABLET_LISTEN=$(TABLET_LISTEN) METRICS_PORT=$(METRICS_PORT) scripts/run-local.sh

# hdfs runs an HDFS minicluster (Hadoop's released MiniDFSCluster from Maven
# Central, internal/hdfstest) on 127.0.0.1:$(HDFS_PORT) in the foreground,
# data in $(DATA_DIR)/hdfs, and prints the remote.data.dir for
# make run REMOTE_DATA_DIR=hdfs://127.0.0.1:$(HDFS_PORT)/fluss
hdfs: deps ## an HDFS minicluster on 127.0.0.1 (HDFS_PORT, 9000) for make run REMOTE_DATA_DIR=hdfs://...
	@scripts/resolve-maven.sh
	$(GO) build -o bin/hdfsrun ./internal/hdfstest/cmd/hdfsrun
	bin/hdfsrun -dir "$(DATA_DIR)/hdfs" -port $(HDFS_PORT)

# deps installs the Debian packages the tests and `make run` need (as root,
# `apt-get update` once, then install), only when something is missing.
deps: ## the Debian packages the tests and make run need (as root, only what is missing)
	@scripts/install-deps.sh

# test-deps is deps plus the released packages the tests run, pinned by the
# project's files: Fluss's servers and Java client from Maven Central into
# .deps/maven (scripts/resolve-maven.sh), Fluss's Rust client from
# crates.io, built once into .deps/cargo-target (scripts/resolve-cargo.sh),
# and Fluss's Python client from PyPI, hash-pinned, into .deps/pyfluss-venv
# (scripts/resolve-pip.sh). Later runs need no network. make run needs none
# of them.
test-deps: deps ## deps plus the pinned Maven, crates.io and PyPI packages the tests run, into .deps
	@scripts/resolve-maven.sh
	@scripts/resolve-cargo.sh >/dev/null
	@scripts/resolve-pip.sh >/dev/null

test: test-deps vet ## the full gate: install what is missing, every test under -race against real servers, then fuzz
	$(GO) test -race -count=1 -timeout 20m ./...
	$(MAKE) --no-print-directory fuzz

# check is the loop to run before a commit: no root, no network once the
# module cache and staticcheck are there, no server started (tests that need
# ZooKeeper, a JVM, an emulator, built clients or buildah skip under -short;
# under make test they run, and a missing server fails them). Go's test
# cache applies: make check CHECK_FLAGS=-count=1 runs every test again.
CHECK_FLAGS ?=
check: vet lint ## the fast loop: gofmt, go vet, staticcheck and go test -short, without root or servers
	$(GO) test -short $(CHECK_FLAGS) -timeout 10m ./...

vet: ## gofmt check and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed (make fmt):"; gofmt -l .; exit 1; }
	$(GO) vet ./...

fmt: ## gofmt -w on every Go file of the repository
	gofmt -w $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.deps/*')

# lint runs staticcheck (checks as staticcheck defaults them; a deliberate
# finding is marked on its line with //lint:ignore and the reason).
lint: $(STATICCHECK) ## staticcheck, pinned (STATICCHECK_VERSION), installed into .deps on first use
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Each decoder's fuzz target runs briefly; longer runs: make fuzz FUZZTIME=1000000x
# Logs go to a fresh temporary directory per run, removed when every target passed.
fuzz: ## each decoder's fuzz target briefly (FUZZTIME, a count)
	@set -e; logs=$$(mktemp -d "$${TMPDIR:-/tmp}/fluss-sidecar-fuzz.XXXXXX"); \
	for t in $$(scripts/fuzz-targets.sh); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test $$pkg -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) >"$$logs/$$name.log" 2>&1 || { cat "$$logs/$$name.log"; echo "fuzz logs kept in $$logs"; exit 1; }; \
	done; rm -rf "$$logs"

# Every benchmark beside its same-run baselines, with the ratios
# (docs/performance.md).
bench: test-deps ## every benchmark beside its same-run baselines (scripts/bench.sh)
	scripts/bench.sh

# 100,000 producer snapshots in ZooKeeper: start-up until /readyz, the
# index's listing and memory, a GET storm over 1,000 random ids against raw
# getData, and past sidecar.snapshot-cache.max-entries (docs/limits.md,
# "Many producers"). Not part of make bench: filling ZooKeeper takes a while.
bench-producers: test-deps ## 100,000 producer snapshots: start-up, listing, GET storm, cache limits
	@out=$$($(GO) test ./tests/bench/ -run='^$$' -bench='ManyProducers' -benchtime=1x -count=1 -timeout 30m 2>&1) || { echo "$$out"; exit 1; }; \
	echo "$$out" | sed -n 's/^many| /  /p; /^BenchmarkManyProducers/p'

# Job-scale benchmarks, kept out of make bench (minutes, and thousands of
# descriptors): memory per idle connection at 1k/10k/12k connections and
# the GET storm at 1k/4k/16k connections (docs/performance.md).
bench-scale: test-deps ## connections at job scale: memory per idle connection, GET storms at 1k-16k
	scripts/bench-scale.sh

# The linearizability checker's long version (tests/lincheck/): every scenario for
# 15 s with three faults, three runs in a row; each must pass. Extra sidecar
# settings: make lincheck LINCHECK_KV='sidecar.snapshot-cache.max-bytes=0'
# On HDFS (a minicluster per run) instead of a local directory:
# make lincheck LINCHECK_REMOTE=hdfs
lincheck: deps ## the linearizability checker's long run, three times
	@for i in 1 2 3; do \
		echo "lincheck run $$i of 3"; \
		LINCHECK_LONG=1 LINCHECK_KV="$(LINCHECK_KV)" LINCHECK_REMOTE="$(LINCHECK_REMOTE)" $(GO) test -count=1 -timeout 30m -v -run 'TestLinearizable|TestCheckerCatchesStaleTarget|TestEnsembleKeepsAcknowledgedWrites|TestSyncThenReadAfterAnotherServersAck' ./tests/lincheck/ || exit 1; \
	done

# The long run (tests/soak/): two sidecar processes on one ZooKeeper under a GET
# storm, job cycles, connection churn and bad input, one restarted with
# SIGTERM every SOAK_RESTART_EVERY; fails when the other's memory,
# goroutines, descriptors or cache grow past what its live data explains
# (docs/limits.md, "Long runs"). make soak SOAK_DURATION=5m for a shorter one;
# make soak SOAK_REMOTE=hdfs keeps the offsets files on an HDFS minicluster.
SOAK_DURATION ?= 30m
SOAK_RESTART_EVERY ?= 1m
SOAK_TIMEOUT ?= 3h
soak: deps ## the long run: two sidecars on one ZooKeeper for SOAK_DURATION with restarts
	SOAK_REMOTE=$(SOAK_REMOTE) SOAK_DURATION=$(SOAK_DURATION) SOAK_RESTART_EVERY=$(SOAK_RESTART_EVERY) $(GO) test -count=1 -timeout $(SOAK_TIMEOUT) -v -run '^TestSoak$$' ./tests/soak/

# Runs compat_test's Python and Java clients against a running sidecar (see
# compat_test/README.md): make compat BOOTSTRAP=host:port
compat: deps ## the Python and Java compatibility clients against a running sidecar (BOOTSTRAP)
	compat_test/run.sh --bootstrap $(BOOTSTRAP)

# Fluss's released Java client, unchanged (compat_test/flussclient), against a
# running sidecar or Fluss cluster: make fluss-client BOOTSTRAP=host:port
# [FLUSS_USER=u FLUSS_PASSWORD=p] [SCENARIOS="ping tables offsets refresh"]
FLUSS_USER ?=
FLUSS_PASSWORD ?=
SCENARIOS ?= ping tables offsets refresh
fluss-client: deps ## Fluss's released Java client against a running sidecar or cluster (BOOTSTRAP)
	scripts/fluss-client.sh --bootstrap $(BOOTSTRAP) $(if $(FLUSS_USER),--user $(FLUSS_USER) --password $(FLUSS_PASSWORD)) $(SCENARIOS)

# A real Flink job, exactly once across failures (compat_test/flink_test.go):
# a local MiniCluster writes through Fluss's Flink connector (fluss-flink-1.20
# 0.9.1) into an aggregation table, through a proxy sidecar in front of a real
# Fluss 0.9.1 cluster; the job fails once (after a checkpoint, before one, and
# before one with the sidecar restarted) and every key's sum is checked. About
# two and a half minutes; make test runs it too. Needs only the Maven
# packages (scripts/resolve-maven.sh), not the Rust or Python clients.
flink: deps ## a Flink job, exactly once across failures, through a proxy sidecar
	@scripts/resolve-maven.sh
	$(GO) test -count=1 -timeout 6m -run 'TestFlinkExactlyOnce$$' -v ./compat_test

# Fluss's Rust client crate fluss-rs, unchanged (compat_test/rust), against a
# running sidecar or Fluss cluster: make fluss-rs-client BOOTSTRAP=host:port
# [FLUSS_USER=u FLUSS_PASSWORD=p]. Needs cargo (Rust 1.85 or newer); the first
# build takes minutes (scripts/resolve-cargo.sh), later ones are offline.
fluss-rs-client: ## Fluss's Rust client fluss-rs against a running sidecar or cluster (BOOTSTRAP)
	scripts/fluss-rs-client.sh --bootstrap $(BOOTSTRAP) $(if $(FLUSS_USER),--user $(FLUSS_USER) --password $(FLUSS_PASSWORD))

# The Rust client against the binary in embedded mode, started on a free port.
fluss-rs-embedded: ## the Rust client against the binary in embedded mode
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/fluss-sidecar
	FLUSS_SIDECAR_BIN=$(BIN) scripts/compat-embedded.sh --fluss-rs

# Fluss's Python client, PyPI package pyfluss, unchanged
# (compat_test/python/pyfluss_client.py), against a running sidecar or Fluss
# cluster: make pyfluss-client BOOTSTRAP=host:port [FLUSS_USER=u
# FLUSS_PASSWORD=p] [PYFLUSS_SCENARIOS="ping tables"]. Needs CPython 3.11; the
# venv is made once by scripts/resolve-pip.sh.
PYFLUSS_SCENARIOS ?= ping offsets tables
pyfluss-client: ## Fluss's Python client pyfluss against a running sidecar or cluster (BOOTSTRAP)
	"$$(scripts/resolve-pip.sh)" compat_test/python/pyfluss_client.py --bootstrap $(BOOTSTRAP) $(if $(FLUSS_USER),--user $(FLUSS_USER) --password $(FLUSS_PASSWORD)) $(PYFLUSS_SCENARIOS)

# The Python client against the binary in embedded mode, on a free port.
pyfluss-embedded: ## the Python client against the binary in embedded mode
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/fluss-sidecar
	FLUSS_SIDECAR_BIN=$(BIN) scripts/compat-embedded.sh --pyfluss $(PYFLUSS_SCENARIOS)

# The same clients against the binary in embedded mode (no ZooKeeper, no
# remote storage), started on a free port by scripts/compat-embedded.sh.
compat-embedded: deps ## the compatibility clients against the binary in embedded mode
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/fluss-sidecar
	FLUSS_SIDECAR_BIN=$(BIN) scripts/compat-embedded.sh

# Time from exec to the first API_VERSIONS answer in embedded mode.
embedded-startup: ## time from exec to the first API_VERSIONS answer in embedded mode
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/fluss-sidecar
	scripts/embedded-startup.sh $(BIN)

# The container image (Dockerfile); needs a running Docker daemon.
IMAGE ?= fluss-sidecar:dev
image: ## the container image (needs a Docker daemon)
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg BUILD_TIME=$(BUILD_TIME) -t $(IMAGE) .

# The same image without a Docker daemon or a registry (buildah, as root,
# with a private storage removed afterwards): an OCI archive, or an OCI
# layout directory when IMAGE_OCI does not end in .tar
# (scripts/build-image.sh; go test ./deploy/image/ builds and starts it).
.PHONY: image-buildah
IMAGE_OCI ?= bin/fluss-sidecar-image.tar
image-buildah: ## the same image as an OCI archive with buildah, as root, without a daemon
	VERSION=$(VERSION) COMMIT=$(COMMIT) BUILD_TIME=$(BUILD_TIME) IMAGE=$(IMAGE) scripts/build-image.sh $(IMAGE_OCI)

generate: ## messages/fluss.pb.go from messages/fluss.proto (pinned protoc-gen-go)
	@command -v protoc >/dev/null || scripts/install-deps.sh
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	cd messages && PATH="$(CURDIR)/bin:$$PATH" protoc --proto_path=. --go_out=. --go_opt=paths=source_relative fluss.proto

clean: ## remove bin/ (keeps ./data)
	rm -rf bin
	@echo "kept local data in $(DATA_DIR) (ZooKeeper and remote storage of make run); make clean-data removes it"

# Removes what make run stored: ZooKeeper's data and the remote.data.dir.
clean-data: ## remove what make run stored (ZooKeeper's data, the remote.data.dir)
	rm -rf "$(DATA_DIR)"

# Sluice developer targets. `make run` and `make test` are all a newcomer needs.
SHELL := /bin/bash

GO        ?= go
BIN       ?= bin/sluice
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
DATA      ?= ./.data/standalone
CONTROLLER_ADDR ?= 127.0.0.1:10080
NODE_ADDR ?= 127.0.0.1:12345
HDFS_RPC_ADDR ?= 127.0.0.1:8020
HDFS_DATA_ADDR ?= 127.0.0.1:9866
WEBHDFS_ADDR ?= 127.0.0.1:9870
NFS_ADDR  ?= 127.0.0.1:12049
S3_ADDR   ?= 127.0.0.1:9000
# Benchmark time per benchmark; the disk probes need a few hundred fsyncs to settle.
BENCHTIME ?= 2s

.PHONY: all build run test bench bench-scale bench-tail bench-head bench-nfs bench-s3 lint soak soak-pipeline clean harness universe proto spark s3clients s3a-jars

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/sluice

# The main job: a controller and a node in one process (sluice standalone).
run: build
	./$(BIN) standalone --data $(DATA) --controller-addr $(CONTROLLER_ADDR) --node-addr $(NODE_ADDR) \
		--hdfs-rpc-addr $(HDFS_RPC_ADDR) --hdfs-data-addr $(HDFS_DATA_ADDR) --webhdfs-addr $(WEBHDFS_ADDR) \
		--nfs-addr $(NFS_ADDR) --s3-addr $(S3_ADDR)

test:
	bash scripts/test-deps.sh
	$(MAKE) --no-print-directory harness
	$(MAKE) --no-print-directory s3clients
	$(GO) vet ./...
	$(GO) test -race=false -count=1 -timeout 15m ./...
	$(MAKE) --no-print-directory spark

# The DC/OS Universe package (universe/): schemas, ASCII, the template
# rendered with the defaults and with an options file into a Marathon app.
# `make test` runs the same checks (they are Go tests under ./...).
universe:
	$(GO) test -count=1 ./universe/...

# The Hadoop test harness (tier2/hadooptest): real HDFS, SequenceFile.Reader
# and MapReduce for tier 2's tests. Maven fetches Hadoop into ~/.m2 on the
# first run; nothing is done while the classes are newer than their sources.
HARNESS := tier2/hadooptest/harness
HARNESS_SRC := $(HARNESS)/pom.xml $(shell find $(HARNESS)/src -name '*.java' 2>/dev/null)

harness: $(HARNESS)/target/classpath.txt
	@: # up to date: nothing to say

# Maven, quiet and plain: batch mode, no transfer progress, no colour.
# Maven 3.8 with jansi 2 (Debian's) still starts lines with ESC[0m resets
# under -B and -Dstyle.color=never; only jansi.noreset, set in the JVM's
# own options (MAVEN_OPTS, read before Maven parses -D), stops them.
MVN_ANY := MAVEN_OPTS="$$MAVEN_OPTS -Djansi.noreset=true" mvn -B -q --no-transfer-progress -Dstyle.color=never
MVN := $(MVN_ANY) -f $(HARNESS)/pom.xml
HARNESS_LOG := $(HARNESS)/target/mvn.log

# Offline first (seconds when ~/.m2 has everything), online when it has
# not. Both attempts write to HARNESS_LOG: the offline one's [ERROR]s
# (what it could not find) are expected, so the log is shown only when the
# online attempt fails too.
$(HARNESS)/target/classpath.txt: $(HARNESS_SRC)
	@mkdir -p $(@D)
	@echo "harness: mvn compile (log: $(HARNESS_LOG))"
	@if ! $(MVN) -o compile >$(HARNESS_LOG) 2>&1; then \
		echo "harness: not everything is in ~/.m2 yet; fetching Hadoop (first run only)"; \
		if ! $(MVN) compile >>$(HARNESS_LOG) 2>&1; then \
			echo "harness: mvn compile failed; its output (offline attempt first):" >&2; \
			cat $(HARNESS_LOG) >&2; \
			exit 1; \
		fi; \
	fi
	@touch $@

# The jars Spark needs for s3a:// beside PySpark's own (hadoop-aws 3.5.0
# and the AWS SDK modules S3A loads, about 12 MB; the pom says why these),
# copied into $(S3A_JARS)/target/jars for the S3 head's Spark test
# (s3gateway/sparktest). Offline first, as for the harness.
S3A_JARS := s3gateway/sparktest/jars
S3A_LOG := $(S3A_JARS)/target/mvn.log

s3a-jars: $(S3A_JARS)/target/jars.stamp
	@: # up to date: nothing to say

$(S3A_JARS)/target/jars.stamp: $(S3A_JARS)/pom.xml
	@rm -rf $(@D)/jars && mkdir -p $(@D)
	@echo "s3a-jars: mvn package (log: $(S3A_LOG))"
	@if ! $(MVN_ANY) -f $< -o package >$(S3A_LOG) 2>&1; then \
		echo "s3a-jars: not everything is in ~/.m2 yet; fetching hadoop-aws and the AWS SDK modules (first run only)"; \
		if ! $(MVN_ANY) -f $< package >>$(S3A_LOG) 2>&1; then \
			echo "s3a-jars: mvn package failed; its output (offline attempt first):" >&2; \
			cat $(S3A_LOG) >&2; \
			exit 1; \
		fi; \
	fi
	@touch $@

# The Hive DDL run in a real engine: Spark SQL with Hive support (PySpark,
# installed into .cache/pyspark by scripts/spark-deps.sh on the first run:
# about 460 MB fetched, 3 minutes on a fresh machine, seconds once pip has
# it cached). `make test` runs it last; its tests are built with the
# "spark" tag (tier2/hive/spark_test.go), so `go test ./...` alone skips
# them, and they also read chunks on a MiniDFSCluster (the Hadoop harness).
# The S3 head's s3a:// test (s3gateway/sparktest) runs in the same PySpark
# with the jars of s3a-jars.
spark:
	bash scripts/test-deps.sh
	bash scripts/spark-deps.sh
	$(MAKE) --no-print-directory harness
	$(MAKE) --no-print-directory s3a-jars
	$(GO) test -tags spark -count=1 -timeout 10m -run Spark ./tier2/hive/... ./s3gateway/sparktest/...

# The S3 clients the S3 head's tests drive (boto3, the AWS CLI, DuckDB
# with httpfs; s3gateway/clients_test.go), pinned, in a virtual
# environment at .cache/s3clients: about 40 MB fetched on the first run,
# nothing done after. `go test ./s3gateway/` fails, saying to run this,
# when it is missing.
s3clients:
	bash scripts/s3-deps.sh

# Disk limits (node/diskprobe) come first so the node's numbers can be read
# against them, then the append path in process (node/container) and over
# TCP (node/server). -p 1 runs one package at a time: benchmarks of two
# packages at once would share the disk and the CPUs. Set SLUICE_BENCH_DIR
# to benchmark another disk than TMPDIR's.
bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchtime $(BENCHTIME) \
		./node/diskprobe/ ./node/container/ ./node/server/ ./node/tiering/ ./internal/latency/

# The scaling benchmarks (docs/BENCHMARKS.md, "Scaling"): the auto-scaler's
# reaction, the write latency during a scale, and 10,000 segments on one
# node, each against a fresh standalone, ROUNDS times (3); one JSON report
# a line. About 5 minutes a round.
bench-scale: build
	ROUNDS=$(or $(ROUNDS),3) scripts/bench-scale.sh $(BIN)

# The tail-latency targets (docs/BENCHMARKS.md, "Client path"): 10 MiB/s
# writes and e2e on a fresh standalone and right after a burst, against the
# disk's write+fsync in the same run, and the peak RSS of a 4-writer load;
# min/median/max over ROUNDS rounds (~2 min each).
bench-tail: build
	ROUNDS=$(or $(ROUNDS),3) scripts/bench-tail.sh $(BIN)

# The HDFS head's sequential reads with Hadoop's client (hdfs:// and
# webhdfs://) against the disk and a MiniDFSCluster in the same run
# (hdfsgateway/headbench; docs/BENCHMARKS.md, "HDFS head"). Minutes: a
# MiniDFSCluster and two harness JVMs. SLUICE_HEADBENCH_FILES, _MIB and
# _ROUNDS change its shape (4 files of 64 MiB, 5 rounds).
bench-head:
	$(MAKE) --no-print-directory harness
	$(GO) test -count=1 -timeout 30m -run '^$$' -bench HeadRead -benchtime 1x ./hdfsgateway/headbench/

# The S3 head's sequential reads with boto3 (and Go's net/http) against
# the disk in the same run (s3gateway/s3bench; docs/BENCHMARKS.md, "S3
# head"). About 10 s. SLUICE_S3BENCH_FILES, _MIB and _ROUNDS change its
# shape (4 files of 64 MiB, 5 rounds).
bench-s3: s3clients
	$(GO) test -count=1 -timeout 30m -run '^$$' -bench S3Read -benchtime 1x ./s3gateway/s3bench/
# The NFS head's sequential reads with libnfs's nfs-cat against cat of the
# same files from the disk, in the same run (nfsexport/nfsbench;
# docs/BENCHMARKS.md, "NFS head"). About 30 s. SLUICE_NFSBENCH_FILES, _MIB
# and _ROUNDS change its shape (4 files of 64 MiB, 5 rounds).
bench-nfs:
	$(GO) test -count=1 -timeout 30m -run '^$$' -bench NFSRead -benchtime 1x ./nfsexport/nfsbench/

lint:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@sc="$$(command -v staticcheck || echo "$$($(GO) env GOPATH)/bin/staticcheck")"; \
	if [ -x "$$sc" ]; then "$$sc" ./...; else echo "staticcheck not installed (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2); skipped"; fi

# Long crash runs: tests named *Crash* run their long variants when SLUICE_SOAK=1
# (kill -9 / torn-write loops; the kill -9 ones are in tests/crash). Not part
# of `make test` or CI.
soak:
	SLUICE_SOAK=1 $(GO) test -run Crash -count=1 -timeout 60m ./...

# The pipeline sample's crash test alone, with 20 random kills and more input.
soak-pipeline:
	SLUICE_SOAK=1 $(GO) test -run TestPipelineCrash -count=1 -v -timeout 20m ./examples/pipeline/

# The HDFS head's protocol messages, generated from Hadoop's .proto files
# (shipped in the colinmarc/hdfs/v2 module). The output is committed:
# only regenerate (needs protoc: apt-get install protobuf-compiler).
proto:
	bash scripts/gen-proto.sh

clean:
	rm -rf bin $(HARNESS)/target $(S3A_JARS)/target

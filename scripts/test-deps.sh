#!/usr/bin/env bash
# Installs, with apt-get, what `make test` needs beyond Go, and only what is
# missing. Works as root or through sudo, never asks a question, and runs
# `apt-get update` only when something has to be installed. It prints one
# line per step; apt-get's own output is shown only when it fails.
set -euo pipefail

missing=()

# need_pkg DEBIAN_PACKAGE CHECK
# Marks DEBIAN_PACKAGE for installation unless CHECK is found: a command name
# on PATH, or an absolute path to a file the package ships.
need_pkg() {
	local pkg=$1 check=$2
	if [[ $check == /* ]]; then
		[[ -e $check ]] && return 0
	elif command -v "$check" >/dev/null 2>&1; then
		return 0
	fi
	missing+=("$pkg")
}

install_missing() {
	((${#missing[@]} == 0)) && return 0
	local sudo=()
	if ((EUID != 0)); then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "test-deps: need root or sudo to install: ${missing[*]}" >&2
			exit 1
		fi
		sudo=(sudo -n)
	fi
	# apt-get and dpkg talk a lot even with -qq (unpacking, setting up,
	# debconf): their output goes to a log that is shown only if they fail.
	local log
	log=$(mktemp "${TMPDIR:-/tmp}/sluice-test-deps.XXXXXX")
	echo "test-deps: installing ${missing[*]} (apt-get)" >&2
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 ||
		! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
		echo "test-deps: apt-get failed to install ${missing[*]}; its output:" >&2
		cat "$log" >&2
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
	echo "test-deps: installed ${missing[*]}" >&2
}

# Needed now (real components in tests, never mocks):
need_pkg zookeeper            /usr/share/java/zookeeper.jar  # cluster: ZooKeeper server for tests (clustertest.StartZooKeeper)
need_pkg default-jre-headless java                           # runs ZooKeeper and the Hadoop harness
need_pkg default-jdk-headless javac                          # make harness: compiles tier2/hadooptest/harness
need_pkg maven                mvn                            # make harness: fetches Hadoop (hadoop-client-minicluster)
need_pkg hdfs-cli             hdfs                           # tests/e2e: Debian's HDFS client (colinmarc/hdfs's CLI) reads through the HDFS head
need_pkg curl                 curl                           # tests/docs: the README's walkthrough calls the REST API
need_pkg python3              python3                        # hdfsgateway/webhdfs: a Python WebHDFS client (urllib)
# make spark (part of make test): scripts/spark-deps.sh makes a venv for PySpark;
# make s3clients (also part of make test): scripts/s3-deps.sh one for the S3 clients.
py_stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2>/dev/null || echo /usr/lib/python3.11)
need_pkg python3-venv         "$py_stdlib/ensurepip/__init__.py" # the venv module's pip bootstrap
#
# Needed as the parts that use them land:
# need_pkg libnfs-utils         nfs-ls                         # nfsexport: NFS client
# need_pkg kcat                 kcat                           # kafka head: Kafka client

install_missing

#!/bin/sh
# bench-tail.sh runs the tail-latency targets of docs/BENCHMARKS.md
# ("Client path", issue 13) ROUNDS times, each run against a fresh
# `sluice standalone` (default settings: tier 2 and the HDFS, NFS and S3
# heads on, every port a free loopback one; data under a new temporary
# directory that is removed after the run):
#
#   write-fresh  bench write --rate 10240 (10 MiB/s of 1 KiB events) with
#                --measure-disk in the node's directory and --disk-canary
#   write-burst  the same right after --after-burst BURST
#   e2e-fresh    bench e2e --rate 10240 (write -> tail read), same probes
#   e2e-burst    the same right after --after-burst BURST
#   rss          4 writers on 4 segments writing RSS_BYTES as fast as they
#                go, with --server-pid (peak RSS) and --server-pprof
#
# Each run prints "# run: NAME", "# load: ..." (/proc/loadavg before it),
# its report (one JSON line: sluice bench -o json) and "# load after:
# ...". At the end `sluice bench summarize` prints every measure's
# min/median/max over the rounds against the issue's targets.
#
# Usage: scripts/bench-tail.sh [SLUICE_BINARY] (default: builds bin/sluice).
# ROUNDS (3), WHICH ("write-fresh write-burst e2e-fresh e2e-burst rss"),
# DURATION (5s), RATE (10240), BURST (2GiB), RSS_BYTES (1100000000),
# CACHE (256MiB, the standalone's --cache-size) and OUT (a file to keep
# the reports in; default: a temporary one, removed) change the runs.
set -eu
BIN=${1:-}
ROUNDS=${ROUNDS:-3}
WHICH=${WHICH:-"write-fresh write-burst e2e-fresh e2e-burst rss"}
DURATION=${DURATION:-5s}
RATE=${RATE:-10240}
BURST=${BURST:-2GiB}
RSS_BYTES=${RSS_BYTES:-1100000000}
CACHE=${CACHE:-256MiB}

if [ -z "$BIN" ]; then
	go build -o bin/sluice ./cmd/sluice
	BIN=bin/sluice
fi
OUT=${OUT:-}
tmpout=
if [ -z "$OUT" ]; then
	tmpout=$(mktemp)
	OUT=$tmpout
else
	: >"$OUT"
fi
pid=
dir=

. "$(dirname "$0")/standalone.sh"

start() {
	start_standalone bench-tail "$BIN" --cache-size "$CACHE" \
		--hdfs-rpc-addr 127.0.0.1:0 --hdfs-data-addr 127.0.0.1:0 --webhdfs-addr 127.0.0.1:0 \
		--nfs-addr 127.0.0.1:0 --s3-addr 127.0.0.1:0 --pprof-addr 127.0.0.1:0
}

stop() { stop_standalone; }

cleanup() {
	stop
	if [ -n "$tmpout" ]; then
		rm -f "$tmpout"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run() {
	name=$1
	shift
	{
		echo "# run: $name"
		echo "# load: $(cat /proc/loadavg)"
		if ! "$BIN" --controller "$ctl" -o json bench "$@" >"$dir/report" 2>"$dir/bench.err"; then
			echo "bench-tail: $name failed:" >&2
			cat "$dir/bench.err" >&2
		fi
		tr -d '\n' <"$dir/report"
		echo
		echo "# load after: $(cat /proc/loadavg)"
	} | tee -a "$OUT"
}

for r in $(seq "$ROUNDS"); do
	for w in $WHICH; do
		echo "# round $r: $w" | tee -a "$OUT"
		start
		disk="--measure-disk --disk-dir $dir/data/node --disk-canary"
		paced="--rate $RATE --duration $DURATION --server-pid $pid"
		case $w in
		write-fresh) run "$w" write $paced $disk ;;
		write-burst) run "$w" write $paced $disk --after-burst "$BURST" ;;
		e2e-fresh) run "$w" e2e $paced $disk ;;
		e2e-burst) run "$w" e2e $paced $disk --after-burst "$BURST" ;;
		rss) run "$w" write --writers 4 --segments 4 --count $((RSS_BYTES / 1024)) \
			--server-pid "$pid" --server-pprof "$pprof" ;;
		*)
			echo "bench-tail: unknown run $w" >&2
			exit 2
			;;
		esac
		stop
	done
done
echo
"$BIN" bench summarize --cache-size "$CACHE" "$OUT"

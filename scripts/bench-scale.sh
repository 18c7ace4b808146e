#!/bin/sh
# bench-scale.sh runs the scaling benchmarks of docs/BENCHMARKS.md
# ("Scaling") against a fresh `sluice standalone` per round: the
# auto-scaler's reaction (bench scale), the write ack latency during a
# manual scale against the rest of the same run (bench write --scale-at),
# one node holding 10,000 segments (100 streams x 100 segments, 100
# writers) with the server's RSS and Go heap, and its reference: the same
# writers and rate on 100 segments (one stream). Each report is one JSON line
# on stdout, preceded by a "# load: ..." line (/proc/loadavg before the
# run). Usage: scripts/bench-scale.sh [SLUICE_BINARY]; ROUNDS (3), WHICH
# ("reaction scale-at many") and MANY_DURATION (30s) change the runs.
set -eu
BIN=${1:-bin/sluice}
ROUNDS=${ROUNDS:-3}
WHICH=${WHICH:-"reaction scale-at many few"}
MANY_DURATION=${MANY_DURATION:-30s}

. "$(dirname "$0")/standalone.sh"

start() {
	start_standalone bench-scale "$BIN" --no-hdfs-head --no-nfs-head --no-s3-head --pprof-addr 127.0.0.1:0
}

stop() { stop_standalone; }

run() {
	echo "# load: $(cat /proc/loadavg)"
	"$BIN" --controller "$ctl" -o json bench "$@" 2>/dev/null | tr -d '\n'
	echo
}

for r in $(seq "$ROUNDS"); do
	for w in $WHICH; do
		echo "# round $r: $w"
		start
		case $w in
		reaction) run scale --target 100 --rate 1000 --event-size 100 ;;
		scale-at) run write --segments 4 --rate 5000 --event-size 100 --duration 20s --scale-at 10s ;;
		many) run write --streams 100 --segments 100 --writers 100 --clients 50 --rate 10000 --event-size 100 \
			--duration "$MANY_DURATION" --server-pid $pid --server-pprof "$pprof" ;;
		few) run write --streams 1 --segments 100 --writers 100 --clients 50 --rate 10000 --event-size 100 \
			--duration "$MANY_DURATION" --server-pid $pid --server-pprof "$pprof" ;;
		*) echo "bench-scale: unknown run $w" >&2; stop; exit 2 ;;
		esac
		stop
	done
done

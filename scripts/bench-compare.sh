#!/bin/bash
# bench-compare.sh ROUNDS OLD NEW: the same three runs with two sluice
# binaries, alternating, each run against a fresh standalone of its own
# binary (heads on, free loopback ports, a new data directory removed
# after the run), each binary with its own CLI, so that releases without
# --after-burst compare too:
#
#   fresh  bench write --rate 10240 --duration 5s --measure-disk (disk p99)
#   burst  the same right after bench write --writers 8 --segments 8
#          --event-size 64KiB --count 32768 (2 GiB, that stream sealed and
#          deleted by the bench)
#   rss    bench write --writers 4 --segments 4 --count 1074218 (1.1 GB)
#
# Every run prints one line: binary, run, ack p50/p99 (ms), the disk's
# p99, the server's peak RSS, MB/s and the load average.
set -eu
R=$1 OLD=$2 NEW=$3
. "$(dirname "$0")/standalone.sh"
line() {
	python3 -c '
import json, sys
d = json.load(sys.stdin); l = d["latencyMs"]; s = d.get("server") or {}
disk = "%.3f" % d["diskP99Ms"] if "diskP99Ms" in d else "-"
print("%s p50 %.3f p99 %.3f disk-p99 %s peak-rss %.0f MiB MB/s %.1f load %s" % (sys.argv[1], l["p50"], l["p99"], disk,
      s.get("peakRssBytes", 0) / 2**20, d["mbPerSec"], open("/proc/loadavg").read().split()[0]))' "$1"
}
for _ in $(seq "$R"); do
	for v in old new; do
		bin=$OLD
		[ $v = new ] && bin=$NEW
		for run in fresh burst rss; do
			start_standalone bench-compare "$bin" --hdfs-rpc-addr 127.0.0.1:0 --hdfs-data-addr 127.0.0.1:0 \
				--webhdfs-addr 127.0.0.1:0 --nfs-addr 127.0.0.1:0 --s3-addr 127.0.0.1:0
			d=$dir
			paced="--rate 10240 --duration 5s --measure-disk --disk-dir $d/data/node --server-pid $pid"
			case $run in
			fresh) "$bin" --controller "$ctl" -o json bench write $paced 2>/dev/null | line "$v fresh" ;;
			burst)
				"$bin" --controller "$ctl" bench write --writers 8 --segments 8 --event-size 64KiB --count 32768 >/dev/null 2>&1
				"$bin" --controller "$ctl" -o json bench write $paced 2>/dev/null | line "$v burst"
				;;
			rss) "$bin" --controller "$ctl" -o json bench write --writers 4 --segments 4 --count 1074218 --server-pid $pid 2>/dev/null | line "$v rss" ;;
			esac
			stop_standalone
		done
	done
done

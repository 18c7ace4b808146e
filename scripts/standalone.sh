# standalone.sh is sourced by the benchmark scripts (POSIX sh).
#
# start_standalone NAME BIN ARGS... starts `BIN standalone` with ARGS, its
# controller and node on free loopback ports, its data in a new directory
# $dir (its log in $dir/log), waits until the controller listens (and the
# pprof endpoint, when ARGS hold --pprof-addr), and sets pid, ctl (the
# controller's URL) and pprof (its URL, or empty). NAME names the
# directory and the error. stop_standalone stops it, removes $dir and
# syncs the filesystem.
start_standalone() {
	_name=$1 _bin=$2
	shift 2
	_want_pprof=
	case " $* " in *" --pprof-addr "*) _want_pprof=1 ;; esac
	dir=$(mktemp -d "${TMPDIR:-/tmp}/$_name-XXXXXX")
	: >"$dir/log"
	"$_bin" --log-level warn standalone --data "$dir/data" \
		--controller-addr 127.0.0.1:0 --node-addr 127.0.0.1:0 "$@" >"$dir/log" 2>&1 &
	pid=$!
	_i=0
	until grep -q '^controller listening on ' "$dir/log" &&
		{ [ -z "$_want_pprof" ] || grep -q '^pprof listening on ' "$dir/log"; }; do
		_i=$((_i + 1))
		if [ $_i -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "$_name: the standalone did not start:" >&2
			cat "$dir/log" >&2
			exit 1
		fi
		sleep 0.1
	done
	ctl=http://$(sed -n 's/^controller listening on //p' "$dir/log")
	pprof=
	if [ -n "$_want_pprof" ]; then
		pprof=http://$(sed -n 's/^pprof listening on //p' "$dir/log")
	fi
}

stop_standalone() {
	if [ -n "${pid:-}" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
	if [ -n "${dir:-}" ]; then
		rm -rf "$dir"
		dir=
		# Wait for the filesystem to commit the removal: on a disk
		# mounted with online discard the gigabytes a run leaves would
		# otherwise be discarded during the next run's measurements.
		sync
	fi
}

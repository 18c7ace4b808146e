# Sourced by the scripts that make the tests' Python environments
# (scripts/spark-deps.sh, scripts/s3-deps.sh).
#
# pip_venv NAME VENV PACKAGE...: makes a new virtual environment at VENV
# with the machine's python3 and pip-installs the pinned PACKAGEs into it.
# On a failure it prints what failed with NAME (the calling script's name)
# in front, removes VENV and exits 1; pip's output is shown only then.
pip_venv() {
	local name=$1 venv=$2
	shift 2
	local python log
	python=$(command -v python3 || true)
	if [[ -z $python ]]; then
		echo "$name: python3 not found; install it (apt-get install python3-venv)" >&2
		exit 1
	fi
	log=$(mktemp "${TMPDIR:-/tmp}/sluice-$name.XXXXXX")
	rm -rf "$venv"
	if ! "$python" -m venv "$venv" >"$log" 2>&1 ||
		! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >>"$log" 2>&1; then
		echo "$name: installing $* failed; its output:" >&2
		cat "$log" >&2
		rm -f "$log"
		rm -rf "$venv"
		exit 1
	fi
	rm -f "$log"
}

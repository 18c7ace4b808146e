#!/usr/bin/env bash
# Installs PySpark (Spark SQL with Hive support, in the wheel) into a
# virtual environment at .cache/pyspark for the Hive tests
# (tier2/hive/sparktest; `make spark`). Does nothing when it is there.
# About 460 MB to fetch and 520 MB on disk; Spark 4 runs on the Java 17
# that scripts/test-deps.sh installs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=4.3.0
venv=.cache/pyspark

if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$version')" 2>/dev/null; then
	exit 0
fi
python=$(command -v python3 || true)
if [[ -z $python ]]; then
	echo "spark-deps: python3 not found; install it (apt-get install python3-venv)" >&2
	exit 1
fi
log=$(mktemp "${TMPDIR:-/tmp}/sluice-spark-deps.XXXXXX")
echo "spark-deps: installing pyspark $version into $venv (pip; about 460 MB, first run only)" >&2
rm -rf "$venv"
if ! "$python" -m venv "$venv" >"$log" 2>&1 ||
	! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pyspark==$version" >>"$log" 2>&1; then
	echo "spark-deps: installing pyspark failed; its output:" >&2
	cat "$log" >&2
	rm -f "$log"
	rm -rf "$venv"
	exit 1
fi
rm -f "$log"
echo "spark-deps: installed pyspark $version" >&2

#!/usr/bin/env bash
# Installs PySpark (Spark SQL with Hive support, in the wheel) into a
# virtual environment at .cache/pyspark for the Hive tests
# (tier2/hive/sparktest; `make spark`). Does nothing when it is there.
# About 460 MB to fetch and 520 MB on disk; Spark 4 runs on the Java 17
# that scripts/test-deps.sh installs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/pip-venv.sh

version=4.3.0
venv=.cache/pyspark

if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$version')" 2>/dev/null; then
	exit 0
fi
echo "spark-deps: installing pyspark $version into $venv (pip; about 460 MB, first run only)" >&2
pip_venv spark-deps "$venv" "pyspark==$version"
echo "spark-deps: installed pyspark $version" >&2

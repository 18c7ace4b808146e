#!/usr/bin/env bash
# Installs the S3 clients the S3 head's tests drive (s3gateway/s3test):
# boto3, the AWS CLI (v1, the one pip installs) and DuckDB with its httpfs
# extension (a wheel of its own: DuckDB's wheel does not bundle httpfs, and
# its INSTALL would fetch it from DuckDB's own site), into a virtual
# environment at .cache/s3clients. Does nothing when it is there with these
# versions. About 40 MB to fetch.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.cache/s3clients
pins=(awscli==1.46.2 boto3==1.44.8 botocore==1.44.8 duckdb==1.5.5 duckdb-extension-httpfs==1.5.5)
stamp=$venv/.pins

if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "${pins[*]}" ]]; then
	exit 0
fi
python=$(command -v python3 || true)
if [[ -z $python ]]; then
	echo "s3-deps: python3 not found; install it (apt-get install python3-venv)" >&2
	exit 1
fi
log=$(mktemp "${TMPDIR:-/tmp}/sluice-s3-deps.XXXXXX")
echo "s3-deps: installing ${pins[*]} into $venv (pip; first run only)" >&2
rm -rf "$venv"
if ! "$python" -m venv "$venv" >"$log" 2>&1 ||
	! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" >>"$log" 2>&1; then
	echo "s3-deps: installing the S3 clients failed; its output:" >&2
	cat "$log" >&2
	rm -f "$log"
	rm -rf "$venv"
	exit 1
fi
rm -f "$log"
echo "${pins[*]}" >"$stamp"
echo "s3-deps: installed ${pins[*]}" >&2

#!/usr/bin/env bash
# Installs the S3 clients the S3 head's tests drive (s3gateway/s3test):
# boto3, the AWS CLI (v1, the one pip installs) and DuckDB with its httpfs
# extension (a wheel of its own: DuckDB's wheel does not bundle httpfs, and
# its INSTALL would fetch it from DuckDB's own site), into a virtual
# environment at .cache/s3clients. Does nothing when it is there with these
# versions. About 40 MB to fetch.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/pip-venv.sh

venv=.cache/s3clients
pins=(awscli==1.46.2 boto3==1.44.8 botocore==1.44.8 duckdb==1.5.5 duckdb-extension-httpfs==1.5.5)
stamp=$venv/.pins

if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "${pins[*]}" ]]; then
	exit 0
fi
echo "s3-deps: installing ${pins[*]} into $venv (pip; first run only)" >&2
pip_venv s3-deps "$venv" "${pins[@]}"
echo "${pins[*]}" >"$stamp"
echo "s3-deps: installed ${pins[*]}" >&2

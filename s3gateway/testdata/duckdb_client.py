"""Reads chunks through DuckDB's httpfs (s3://) from the S3 head; prints
what it saw as JSON.

Environment: S3_ENDPOINT (http://host:port), S3_KEY, S3_SECRET, S3_STYLE
(path or vhost: vhost sends every request through S3_ENDPOINT as an HTTP
proxy, so that Host <bucket>.localhost needs no resolver), S3_BUCKET.
httpfs comes from its own wheel (duckdb-extension-httpfs): DuckDB's wheel
does not bundle it and INSTALL would fetch it from DuckDB's site.
"""
import glob
import hashlib
import json
import os
import sys

import duckdb
import duckdb_extension_httpfs

endpoint = os.environ["S3_ENDPOINT"]
style = os.environ.get("S3_STYLE", "path")
bucket = os.environ["S3_BUCKET"]
host = endpoint.split("://", 1)[1]

ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions", "*", "httpfs.duckdb_extension"))
assert len(ext) == 1, ext
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
con.execute(f"LOAD '{ext[0]}'")
if style == "vhost":
    con.execute(f"SET http_proxy = '{host}'")
    host = "localhost:" + host.rsplit(":", 1)[1]
con.execute(
    f"""CREATE SECRET sluice (TYPE s3, KEY_ID '{os.environ["S3_KEY"]}', SECRET '{os.environ["S3_SECRET"]}',
    ENDPOINT '{host}', URL_STYLE '{style}', USE_SSL false, REGION 'us-east-1')"""
)
out = {}
rows = con.execute(f"SELECT filename, size, content FROM read_blob('s3://{bucket}/**/*.seq') ORDER BY filename").fetchall()
out["files"] = {r[0]: {"size": r[1], "sha256": hashlib.sha256(r[2]).hexdigest()} for r in rows}
out["glob"] = [r[0] for r in con.execute(f"SELECT file FROM glob('s3://{bucket}/*/segment=0/*.seq') ORDER BY file").fetchall()]
first = rows[0][0]
one = con.execute(f"SELECT content FROM read_blob('{first}')").fetchone()[0]
out["single_sha256"] = hashlib.sha256(one).hexdigest()
json.dump(out, sys.stdout)

"""Reads files through the S3 head with boto3 and from the disk, in
turns, round after round; prints MB/s per round and source as JSON.

Arguments: a JSON file {"endpoint", "key", "secret", "bucket", "rounds",
"files": [{"key", "path", "sha256"}]}. Round 0 is a warm-up (not
reported). Every read is checked against the file's SHA-256.
"""
import hashlib
import json
import sys
import time

import boto3
from botocore.config import Config

BUF = 1 << 20

spec = json.load(open(sys.argv[1]))
s3 = boto3.client(
    "s3",
    endpoint_url=spec["endpoint"],
    region_name="us-east-1",
    aws_access_key_id=spec["key"],
    aws_secret_access_key=spec["secret"],
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)


def via_s3(f):
    body = s3.get_object(Bucket=spec["bucket"], Key=f["key"])["Body"]
    h, n = hashlib.sha256(), 0
    while True:
        b = body.read(BUF)
        if not b:
            break
        h.update(b)
        n += len(b)
    return h.hexdigest(), n


def via_disk(f):
    h, n = hashlib.sha256(), 0
    with open(f["path"], "rb", buffering=0) as fh:
        while True:
            b = fh.read(BUF)
            if not b:
                break
            h.update(b)
            n += len(b)
    return h.hexdigest(), n


out = {"boto3": [], "python-disk": []}
for rnd in range(spec["rounds"] + 1):
    for name, fn in (("boto3", via_s3), ("python-disk", via_disk)):
        start, total = time.perf_counter(), 0
        for f in spec["files"]:
            digest, n = fn(f)
            if digest != f["sha256"]:
                sys.exit(f"{name}: {f['key']} read wrong bytes")
            total += n
        secs = time.perf_counter() - start
        if rnd > 0:
            out[name].append(total / secs / 1e6)
json.dump(out, sys.stdout)

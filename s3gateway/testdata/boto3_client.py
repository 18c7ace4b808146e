"""Drives boto3 against the S3 head; prints what it saw as JSON.

Environment: S3_ENDPOINT (http://host:port), S3_KEY, S3_SECRET, S3_STYLE
(path or virtual: virtual sends every request through S3_ENDPOINT as an
HTTP proxy, so that Host <bucket>.localhost needs no resolver), S3_BUCKET.
The Go test (clients_test.go) checks the output against the files.
"""
import hashlib
import json
import os
import sys
import urllib.request

import boto3
import botocore
from botocore.config import Config

endpoint = os.environ["S3_ENDPOINT"]
style = os.environ.get("S3_STYLE", "path")
bucket = os.environ["S3_BUCKET"]


def client(secret=None):
    # signature_version s3v4: boto3 presigns with signature version 2
    # otherwise, which the head does not take.
    cfg = {"s3": {"addressing_style": style}, "retries": {"max_attempts": 1}, "signature_version": "s3v4"}
    url = endpoint
    if style == "virtual":
        port = endpoint.rsplit(":", 1)[1]
        url = "http://localhost:" + port
        cfg["proxies"] = {"http": endpoint}
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=os.environ["S3_KEY"],
        aws_secret_access_key=secret or os.environ["S3_SECRET"],
        config=Config(**cfg),
    )


def code(fn):
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return "no error"


s3 = client()
out = {}
out["buckets"] = [b["Name"] for b in s3.list_buckets()["Buckets"]]

pages = 0
keys = []
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, PaginationConfig={"PageSize": 2}):
    pages += 1
    keys += [o["Key"] for o in page.get("Contents", [])]
out["keys"] = keys
out["pages"] = pages

top = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
out["top_prefixes"] = [p["Prefix"] for p in top.get("CommonPrefixes", [])]
seg = s3.list_objects_v2(Bucket=bucket, Prefix=keys[0].rsplit("/", 2)[0] + "/", Delimiter="/")
out["segment_prefixes"] = [p["Prefix"] for p in seg.get("CommonPrefixes", [])]
out["start_after"] = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, StartAfter=keys[1]).get("Contents", [])]
eq = s3.list_objects_v2(Bucket=bucket, Delimiter="=", FetchOwner=True)
out["eq_prefixes"] = [p["Prefix"] for p in eq.get("CommonPrefixes", [])]
v1 = []
for page in s3.get_paginator("list_objects").paginate(Bucket=bucket, PaginationConfig={"PageSize": 3}):
    v1 += [o["Key"] for o in page.get("Contents", [])]
out["v1_keys"] = v1

objects = {}
for k in keys:
    h = s3.head_object(Bucket=bucket, Key=k)
    body = s3.get_object(Bucket=bucket, Key=k)["Body"].read()
    part = s3.get_object(Bucket=bucket, Key=k, Range="bytes=10-19")
    objects[k] = {
        "size": h["ContentLength"],
        "etag": h["ETag"],
        "sha256": hashlib.sha256(body).hexdigest(),
        "range": part["Body"].read().hex(),
        "range_status": part["ResponseMetadata"]["HTTPStatusCode"],
        "content_range": part["ContentRange"],
    }
out["objects"] = objects

k = keys[0]
etag = objects[k]["etag"]
out["if_none_match"] = code(lambda: s3.get_object(Bucket=bucket, Key=k, IfNoneMatch=etag))
out["if_match_other"] = code(lambda: s3.get_object(Bucket=bucket, Key=k, IfMatch='"other"'))
out["if_match"] = s3.get_object(Bucket=bucket, Key=k, IfMatch=etag)["ResponseMetadata"]["HTTPStatusCode"]
out["head_missing"] = code(lambda: s3.head_object(Bucket=bucket, Key="nope/segment=0/x.seq"))
out["get_missing"] = code(lambda: s3.get_object(Bucket=bucket, Key="nope/segment=0/x.seq"))
out["no_bucket"] = code(lambda: s3.list_objects_v2(Bucket="no-such-bucket"))
out["put"] = code(lambda: s3.put_object(Bucket=bucket, Key="x", Body=b"data"))
out["delete"] = code(lambda: s3.delete_object(Bucket=bucket, Key=k))
out["delete_objects"] = code(lambda: s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k}]}))
out["copy"] = code(lambda: s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": k}))
out["create_bucket"] = code(lambda: s3.create_bucket(Bucket="new-bucket"))
out["multipart"] = code(lambda: s3.create_multipart_upload(Bucket=bucket, Key="m"))
out["wrong_secret"] = code(lambda: client(secret="wrong").list_objects_v2(Bucket=bucket))

url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": k}, ExpiresIn=600)
if style == "virtual":
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": endpoint}))
else:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
out["presigned_sha256"] = hashlib.sha256(opener.open(url).read()).hexdigest()
try:
    assert "&X-Amz-Signature=" in url and url.rsplit("&", 1)[1].startswith("X-Amz-Signature=")
    opener.open(url[:-1] + ("0" if url[-1] != "0" else "1"))
    out["presigned_tampered"] = 200
except urllib.error.HTTPError as e:
    out["presigned_tampered"] = e.code

json.dump(out, sys.stdout)

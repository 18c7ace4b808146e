"""Reads s3a:// paths in one local Spark session, for the S3 head's tests.

Usage: python s3aread.py REQUEST.json RESULT.json WORKDIR

REQUEST.json: {"jars": ["JAR", ...], "conf": {"spark.hadoop.fs.s3a.endpoint": "...", ...},
               "reads": {"name": {"kind": "sequencefile" | "binaryfile" | "glob" | "listfiles" | "textwrite", "path": "s3a://...",
                                  "conf": {"hadoop key": "value"}}, ...}}
The jars go to spark.jars (as --jars would put them), conf is set on the
session, then the reads run in order of their names:
  sequencefile: PySpark's sc.sequenceFile(path), or, when the read has a
    conf, sc.newAPIHadoopFile with Hadoop's SequenceFileInputFormat and
    that conf merged over the session's (a LongWritable/BytesWritable
    file, as tier 2's chunks are); each record is [key, value hex].
  binaryfile: spark.read.format("binaryFile").load(path), the DataFrame
    reader of whole files; each file is [path, length, mtime (Unix
    seconds), content hex].
  glob: Hadoop's FileSystem.globStatus(path) through S3A, each file as
    binaryfile's with no content.
  listfiles: FileSystem.listFiles(path, recursive=True), likewise.
  textwrite: sc.parallelize([a line]).saveAsTextFile(path), a write.
RESULT.json is {"name": {"records": [...]} | {"files": [...]} | {} | {"error": "..."}},
the error being the Java exception and its causes, one per line, when the
read failed; "_timings" holds [[step, seconds], ...]. A failure outside a
read (the session does not start) exits non-zero with Spark's message.
WORKDIR is Spark's scratch directory; nothing is written outside it.
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession


def java_error(e):
    """The Java exception of a Py4JJavaError and its causes, one per line."""
    lines = []
    cur = e.java_exception
    while cur is not None and len(lines) < 10:
        lines.append(cur.toString())
        cur = cur.getCause()
    return "\n".join(lines)


def read_sequencefile(spark, path, conf):
    sc = spark.sparkContext
    if conf:
        rdd = sc.newAPIHadoopFile(
            path,
            "org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat",
            "org.apache.hadoop.io.LongWritable",
            "org.apache.hadoop.io.BytesWritable",
            conf=conf,
        )
    else:
        rdd = sc.sequenceFile(path)
    return {"records": [[k, bytes(v).hex()] for k, v in rdd.collect()]}


def read_binaryfile(spark, path, conf):
    if conf:
        raise ValueError("binaryfile reads take no conf")
    df = spark.read.format("binaryFile").load(path)
    # Seconds since the epoch in Spark, whatever Python's time zone.
    rows = df.selectExpr("path", "length", "CAST(modificationTime AS BIGINT) AS mtime", "content").collect()
    return {"files": [[r.path, r.length, r.mtime, bytes(r.content).hex()] for r in rows]}


def hadoop_fs(spark, path):
    sc = spark.sparkContext
    p = sc._jvm.org.apache.hadoop.fs.Path(path)
    return p, p.getFileSystem(sc._jsc.hadoopConfiguration())


def file_row(status):
    return [status.getPath().toString(), status.getLen(), status.getModificationTime() // 1000, ""]


def glob_status(spark, path, conf):
    if conf:
        raise ValueError("glob takes no conf")
    p, fs = hadoop_fs(spark, path)
    return {"files": [file_row(s) for s in fs.globStatus(p) or []]}


def list_files(spark, path, conf):
    if conf:
        raise ValueError("listfiles takes no conf")
    p, fs = hadoop_fs(spark, path)
    it = fs.listFiles(p, True)
    files = []
    while it.hasNext():
        files.append(file_row(it.next()))
    return {"files": files}


def write_text(spark, path, conf):
    if conf:
        raise ValueError("textwrite takes no conf")
    spark.sparkContext.parallelize(["a line Spark tries to write"], 1).saveAsTextFile(path)
    return {}


READS = {
    "sequencefile": read_sequencefile,
    "binaryfile": read_binaryfile,
    "glob": glob_status,
    "listfiles": list_files,
    "textwrite": write_text,
}


def main():
    request_path, result_path, work = sys.argv[1:4]
    with open(request_path) as f:
        request = json.load(f)
    work = os.path.abspath(work)
    start = time.monotonic()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sluice-s3a-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.local.dir", os.path.join(work, "spark"))
        .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
        # A small, quick JVM: the reads are small.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.jars", ",".join(request.get("jars") or []))
    )
    for k, v in (request.get("conf") or {}).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    timings = [["session", time.monotonic() - start]]
    result = {}
    try:
        from py4j.protocol import Py4JJavaError

        for name, read in sorted((request.get("reads") or {}).items()):
            start = time.monotonic()
            try:
                result[name] = READS[read["kind"]](spark, read["path"], read.get("conf") or {})
            except Py4JJavaError as e:
                result[name] = {"error": java_error(e)}
            timings.append([name, time.monotonic() - start])
    finally:
        spark.stop()
    result["_timings"] = [[n, round(t, 1)] for n, t in timings]
    with open(result_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

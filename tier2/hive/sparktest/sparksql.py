"""Runs SQL in one local Spark session with Hive support, for tests.

Usage: python sparksql.py REQUEST.json RESULT.json WORKDIR

REQUEST.json: {"statements": ["CREATE ...", ...], "queries": {"name": "SELECT ...", ...},
               "sequencefiles": {"name": {"path": "...", "conf": {"key": "value"}, "records": false}, ...},
               "classpath": ["JAR", ...]}
The statements run in order, then the queries, then the sequencefiles reads
(Hadoop's SequenceFileInputFormat over path, a directory or a glob, with
conf set on the job); RESULT.json is {"name": [[cell, ...], ...], ...}, a
BINARY cell as {"hex": "..."}, a sequencefiles read as [[records]] or
[["error", "<the Java exception>"]] (with "records": true, [[key, {"hex": value}], ...]); classpath's jars go on the driver's class
path (spark.driver.extraClassPath) before Spark's own; "_timings" holds [[step, seconds], ...].
The metastore is an in-memory Derby database; WORKDIR holds the warehouse
and Derby's log, and nothing else is written outside it. Any error exits non-zero with Spark's message on stderr.
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession


def cell(v):
    if isinstance(v, (bytes, bytearray)):
        return {"hex": bytes(v).hex()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def read_records(spark, path, conf):
    """Every record as [key, value], through PySpark's newAPIHadoopFile."""
    rdd = spark.sparkContext.newAPIHadoopFile(
        path,
        "org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat",
        "org.apache.hadoop.io.LongWritable",
        "org.apache.hadoop.io.BytesWritable",
        conf=conf,
    )
    return [[k, cell(v)] for k, v in rdd.collect()]


def read_sequencefiles(spark, path, conf):
    """Counts the records with a Java job only: no Python workers to start."""
    from py4j.protocol import Py4JJavaError

    sc = spark.sparkContext
    jvm = sc._jvm
    job_conf = jvm.org.apache.hadoop.conf.Configuration(sc._jsc.hadoopConfiguration())
    for k, v in conf.items():
        job_conf.set(k, v)
    cls = jvm.java.lang.Class.forName
    try:
        rdd = sc._jsc.newAPIHadoopFile(
            path,
            cls("org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat"),
            cls("org.apache.hadoop.io.LongWritable"),
            cls("org.apache.hadoop.io.BytesWritable"),
            job_conf,
        )
        return [[rdd.count()]]
    except Py4JJavaError as e:
        return [["error", e.java_exception.toString()]]


def main():
    request_path, result_path, work = sys.argv[1:4]
    with open(request_path) as f:
        request = json.load(f)
    work = os.path.abspath(work)
    start = time.monotonic()
    builder = SparkSession.builder
    if request.get("classpath"):
        builder = builder.config("spark.driver.extraClassPath", os.pathsep.join(request["classpath"]))
    spark = (
        builder.master("local[2]")
        .appName("sluice-hive-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
        # A small, quick JVM: the queries are small, compiling them is not.
        .config(
            "spark.driver.extraJavaOptions",
            "-Dderby.system.home=" + work + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        )
        .config("spark.sql.codegen.wholeStage", "false")
        # The metastore in memory: nothing to keep, no fsync per statement.
        .config("spark.hadoop.javax.jdo.option.ConnectionURL", "jdbc:derby:memory:metastore;create=true")
        .enableHiveSupport()
        .getOrCreate()
    )
    timings = [["session", time.monotonic() - start]]
    try:
        start = time.monotonic()
        for stmt in request.get("statements") or []:
            spark.sql(stmt)
        timings.append(["statements", time.monotonic() - start])
        result = {}
        for name, query in (request.get("queries") or {}).items():
            start = time.monotonic()
            result[name] = [[cell(v) for v in row] for row in spark.sql(query).collect()]
            timings.append([name, time.monotonic() - start])
        for name, read in (request.get("sequencefiles") or {}).items():
            start = time.monotonic()
            read_fn = read_records if read.get("records") else read_sequencefiles
            result[name] = read_fn(spark, read["path"], read.get("conf") or {})
            timings.append([name, time.monotonic() - start])
    finally:
        spark.stop()
    result["_timings"] = [[n, round(t, 1)] for n, t in timings]
    with open(result_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

// Package sparktest reads s3a:// paths in a real Spark for the tests of
// the S3 head (s3gateway): PySpark 4.3.0 with Hadoop's S3A connector
// (hadoop-aws 3.5.0, matching the hadoop-client 3.5.0 PySpark ships) and
// the modules of the AWS SDK v2 that S3A loads, so that the head is
// checked by the client Spark users run, not by reading S3A's source.
//
// # What it needs
//
// PySpark is the virtual environment .cache/pyspark of tier2/hive's Spark
// tests (scripts/spark-deps.sh; found by tier2/hive/sparktest.Find). The
// jars are jars/target/jars, copied there by `mvn package` over
// jars/pom.xml: hadoop-aws without the SDK's "bundle" (hundreds of MB), plus the
// SDK's s3, s3-transfer-manager and their core modules and the analytics
// accelerator S3A 3.5 loads when it initializes, minus what Spark already
// ships (about 12 MB in 34 jars; the pom says how the set was found).
// `make spark` fetches both, then runs the tests built with the "spark"
// tag; Find fails (never skips) when either is missing, saying what to
// run.
//
// # One Run
//
// One Run is one Spark session (local[2], 127.0.0.1 only, no UI) in one
// Python process (a JVM under it) running s3aread.py: the jars on
// spark.jars as --jars would put them, the request's settings on the
// session (S3AConf gives the spark.hadoop.fs.s3a.* ones a user sets for
// the head), then each read: sc.sequenceFile (or newAPIHadoopFile with
// SequenceFileInputFormat when the read has its own Hadoop settings), the
// binaryFile DataFrame reader, Hadoop's own globStatus and listFiles
// through S3A, or a saveAsTextFile (a write). A read that fails in Java
// comes back as its exception and causes, so tests can check refusals.
// The process group is killed when the test's deadline or Timeout passes,
// and at the end of Run in any case.
package sparktest

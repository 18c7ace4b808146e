// Package sparktest runs SQL in a real engine for the tests of tier2/hive:
// Apache Spark with Hive support (Hive 2.3's SerDes, SequenceFile input
// format and metastore, as Spark bundles them), through PySpark in a
// virtual environment of the repository, so that the DDL `sluice hive ddl`
// prints is checked by what users run it in, not by reading Hive's source.
//
// The environment is .cache/pyspark at the repository's root, made by
// scripts/spark-deps.sh (`make spark` runs it, then the tests built with
// the "spark" tag). Run fails, never skips, when it is missing, saying
// what to run. java comes from $JAVA_HOME/bin, else PATH (Spark 4 needs
// Java 17 or later).
//
// One Run is one Spark session in one Python process (a JVM under it):
// the statements in order, then the queries, each query's rows written
// back as JSON (sparksql.py). The metastore (Derby) and the warehouse live
// in a temporary directory of the test; Spark listens on 127.0.0.1 only,
// with no UI. The process group is killed when the test's deadline or
// Run's timeout passes, and at the end of Run in any case. RunScript is
// that process handling alone (a request as JSON in, the result file's
// bytes out), which s3gateway/sparktest runs its own script with.
package sparktest

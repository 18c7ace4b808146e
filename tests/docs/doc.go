// Package docs checks that the documentation is true of the code: it runs
// the command blocks of README.md and docs/*.md against a real standalone,
// and checks that docs/ARCHITECTURE.md's map of folders and README.md's
// layout table name every folder that holds Go files.
//
// # Command blocks
//
// Every fenced block in README.md and docs/*.md names its language. Blocks
// in sh, bash, shell or console are shell blocks and are run; a block in
// any other language (text for synopses, diagrams and output, sql, ...) is
// not. A fence without a language fails the test, so no shell block can be
// left out by mistake. In a console block only the lines after a "$ "
// prompt (and their backslash continuations) are run.
//
// For each file, the test builds the sluice binary, starts
// `sluice standalone` on free loopback ports with a fresh data directory,
// and runs the file's shell blocks in document order, each as a subtest
// named FILE:LINE (the line of the opening fence), with `bash -euo
// pipefail` in a temporary directory shared by the file's blocks, with a
// timeout per block. There, `sluice` on PATH and `bin/sluice` are the
// built binary, SLUICE_CONTROLLER is the standalone's REST API and
// SLUICE_HDFS and SLUICE_WEBHDFS its HDFS head's NameNode RPC and WebHDFS
// addresses (HOST:PORT), so a later block of a file may use what an earlier one created. A block that
// fails reports its file:line, its text and its output.
//
// A block that cannot run here is marked by an HTML comment on the line
// right before its opening fence:
//
//	<!-- doc-test: server -->
//	    the block starts a long-running server (make run, sluice
//	    standalone); the test's own standalone stands in for it.
//	<!-- doc-test: skip REASON -->
//	    the block needs what the test does not have (a cluster, Mesos,
//	    HDFS, the source tree, minutes of benchmark); REASON says what,
//	    and the subtest is skipped with FILE:LINE and REASON.
//
// A marker that is not one of these, a skip without a reason, and a marker
// that is not right before a shell block fail the test.
//
// # Maps of folders
//
// docs/ARCHITECTURE.md's "Packages" table must name, in its first column,
// every folder of the module that holds Go files, and README.md's
// "Layout" table every top-level folder that does. The failure says which
// folder to add where.
//
// The package has no code outside its tests.
package docs

// Package layering holds the test that keeps the module's imports pointing
// down. It has no code of its own: layering_test.go lists every package's
// place in one table (rules) and fails when a package imports upwards, when
// a role imports another role, when code outside tests imports a
// test-support package, or when a package has no place in the table.
//
// The layers, top to bottom (docs/ARCHITECTURE.md, "Dependencies point
// down"):
//
//	programs    cmd/..., examples/..., universe/...
//	role        embed/...: starts and stops the roles for programs and
//	assembly    test harnesses; it may import every role, no role imports it
//	roles       node/..., controller/..., scheduler/..., executor/...,
//	            the heads hdfsgateway/... (HDFS), nfsexport/... (NFS) and
//	            s3gateway/... (S3), and the future head kafka/...; a role
//	            never imports another role
//	libraries   client/..., tier2/..., cluster/...
//	protocol    protocol/...
//	utilities   internal/dirlock, internal/jsonhttp, internal/latency, internal/cpustat,
//	            internal/retry, internal/logs, internal/connserve,
//	            internal/s3keys (and this package, which holds only the test): they import
//	            nothing of the module but each other
//
// A package may import its own layer and those below it. Test-support
// packages (the table names each, with what it starts) may import any
// layer, and only tests import them. Test files themselves (TestImports,
// XTestImports) may import any package: the rules govern what a package's
// own files import, which is what a binary is built from. Only imports
// inside the module count.
package layering

// Package hive generates the Hive DDL that makes Hive read a stream in
// place in tier 2: an external table over the stream's SequenceFiles, one
// partition per segment, and for JSON events a view that parses them.
//
// # What it maps to
//
// Tier 2 keeps a segment's chunks under (package tier2)
//
//	<root>/<scope>/<stream>/segment=<N>/<first offset, 20 digits>.seq
//
// as Hadoop SequenceFiles, key LongWritable (the event's offset), value
// BytesWritable (the event's bytes, unchanged; package tier2/seqfile). DDL
// turns that into
//
//	CREATE EXTERNAL TABLE ... PARTITIONED BY (`segment` BIGINT)
//	ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe'
//	STORED AS SEQUENCEFILE  (Hive's SequenceFileInputFormat)
//	LOCATION '<root>/<scope>/<stream>';
//	ALTER TABLE ... ADD IF NOT EXISTS PARTITION (`segment`=N)
//	    LOCATION '<root>/<scope>/<stream>/segment=N';   (one per segment)
//
// Hive's LazySimpleSerDe is the one of Hive's own SerDes that takes
// BytesWritable values as well as Text. The event formats:
//
//   - text: delimited fields (field.delim and serialization.format set to
//     the one-byte delimiter), the caller's columns or one "line STRING"
//     that takes the whole event;
//   - json: Hive's JSON SerDes read Text values only, so the table
//     <name>_raw holds each event as one "json STRING" column and the view
//     <name> casts get_json_object of each column to its (primitive) type;
//   - binary: the table <name>_raw holds each event as one "event STRING"
//     column and the view <name> gives it back as BINARY, byte for byte
//     (below).
//
// # Binary events, exactly
//
// What Hive's SequenceFile reader hands LazySimpleSerDe for a chunk's
// record is the BytesWritable value: the event's bytes, any bytes, 0 to
// protocol.MaxEventSize of them. LazySimpleSerDe changes them in three
// ways, all avoided:
//
//   - A BINARY column is decoded as base64 when its bytes look like base64
//     (Hive 2.3 in Spark, Hive 4.0/4.1; the table property
//     hive.serialization.decode.binary.as.base64 does not stop it there).
//     The raw table's column is STRING, which LazySimpleSerDe hands over
//     as the bytes unchanged (a Text over them, no UTF-8 check), and the
//     view's CAST(event AS BINARY) copies those bytes.
//   - A field equal to serialization.null.format (default \N) is NULL. The
//     marker is compared with the whole field, and an event may be any
//     bytes, so no marker short of MaxEventSize+1 bytes is impossible as
//     an event. The DDL instead relies on this: every record of a chunk
//     has its value, and a one-column row's field is never missing, so a
//     NULL can only be an event equal to the marker. The raw table sets
//     NullMarker and the view maps NULL back to its bytes with COALESCE.
//     Exact for every event, the marker itself included.
//   - Rows are split on the line delimiter and fields on the field
//     delimiter ('\x01' by default), with an escape byte if escape.delim
//     is set. Lines do not apply: a SequenceFile record is one row,
//     whatever it holds. Fields do: a one-column struct ends its column at
//     the first field delimiter, unless serialization.last.column.takes.rest
//     is true, which the raw table sets. No escape.delim is set.
//
// The tests under the "spark" build tag (`make spark`, package sparktest)
// run the DDL in Spark SQL with Hive support over chunks holding every
// byte value, '\n', '\r', '\x01', \N, base64-looking, empty and invalid
// UTF-8 events and the marker, in a directory and on a MiniDFSCluster,
// and compare the view's bytes.
//
// # Outside Hive
//
// Hadoop's SequenceFileInputFormat over a stream's directory takes each
// segment=N for a MapFile (and fails on its missing "data" file): jobs
// read a stream with mapreduce.input.fileinputformat.input.dir.recursive
// set to true or over the glob <stream dir>/*/*.seq. Hive's partitions
// point at the segment=N directories, which hold chunks only.
//
// Identifiers are back-quoted (a back-quote inside doubled) and string
// literals single-quoted with backslashes and single quotes escaped and
// control characters as \uXXXX, so any root, scope, stream or table name
// is safe to paste. Column names and types are
// checked so that nothing can end a statement.
//
// DDL is pure: it neither reads tier 2 nor asks the controller; the caller
// gives the root and the segments. Its errors match ErrInvalid and name
// the fields as the flags of `sluice hive ddl` do (--format, --table,
// --column, --field-delimiter), that command being what users type.
package hive

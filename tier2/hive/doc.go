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
//   - binary: one "event BINARY" column holding the whole value, with
//     hive.serialization.decode.binary.as.base64=false.
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

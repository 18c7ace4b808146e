package tiering

import (
	"github.com/sluice-streams/sluice/protocol"
	"github.com/sluice-streams/sluice/tier2/seqfile"
)

// What a chunk's SequenceFile holds besides the events' bytes (see
// package seqfile): each event framed in a block (4-byte length + data)
// becomes a record of 4 (record length) + 4 (key length) + 8 (the key,
// a LongWritable) + 4 (the BytesWritable's length) + data; a sync escape
// of 20 bytes follows every seqfile.SyncInterval; and the header, whose
// class names, codec and sync marker stay below fileHeaderBytes.
const (
	recordOverhead  = 4 + 4 + 8 + 4 - 4
	syncBytes       = 4 + 16
	fileHeaderBytes = 256
)

// chunkFit follows a chunk file's size as blocks are added to it, so that
// the file stays within chunkBytes. The bound is on the file, as Hadoop
// splits it: for small events the records' keys and lengths more than
// double the bytes (an 8-byte event is 12 bytes framed and 28 as a
// record). The first block is always taken, so a block larger than the
// bound makes a chunk of its own, larger than the bound: a chunk holds
// whole blocks (the client's batches, 1 MiB by default).
type chunkFit struct {
	chunkBytes int64
	file       int64 // the file's size with the blocks taken
	n          int   // blocks taken
}

func newChunkFit(chunkBytes int64) *chunkFit {
	return &chunkFit{chunkBytes: chunkBytes, file: fileHeaderBytes}
}

// take reports whether block b (framed events) still fits the chunk, and
// counts it if it does.
func (f *chunkFit) take(b []byte) bool {
	events := int64(0)
	for rest := b; len(rest) > 0; events++ {
		_, r, err := protocol.NextEvent(rest)
		if err != nil {
			break // writeEvents reports it
		}
		rest = r
	}
	file := f.file + int64(len(b)) + events*recordOverhead
	if f.n > 0 && file+syncBytes*(file/seqfile.SyncInterval+1) > f.chunkBytes {
		return false
	}
	f.file, f.n = file, f.n+1
	return true
}

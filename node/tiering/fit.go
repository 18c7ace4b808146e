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

// fitChunk returns how many of blocks (whole blocks of framed events, as
// container.UntieredBlocks returns them, at most chunkBytes of events)
// make a chunk file of at most chunkBytes, and their bytes of events. The
// bound is on the file, as Hadoop splits it: for small events the
// records' keys and lengths more than double the bytes (an 8-byte event
// is 12 bytes framed and 28 as a record). At least one block is kept, so
// a block larger than the bound makes a chunk of its own, larger than
// the bound: a chunk holds whole blocks (the client's batches, 1 MiB by
// default).
func fitChunk(blocks [][]byte, chunkBytes int64) (n int, length int64) {
	file := int64(fileHeaderBytes)
	for i, b := range blocks {
		events := int64(0)
		for rest := b; len(rest) > 0; events++ {
			_, r, err := protocol.NextEvent(rest)
			if err != nil {
				break // writeEvents reports it
			}
			rest = r
		}
		file += int64(len(b)) + events*recordOverhead
		if i > 0 && file+syncBytes*(file/seqfile.SyncInterval+1) > chunkBytes {
			break
		}
		n, length = i+1, length+int64(len(b))
	}
	return n, length
}

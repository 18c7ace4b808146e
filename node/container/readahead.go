package container

// partAfter returns the part after p in p's chunk (ok false if p ends its
// chunk, or the chunk is gone or read whole).
func (s *segment) partAfter(p partRef) (partRef, bool) {
	i := s.findChunk(p.Offset)
	if i == len(s.chunks) || s.chunks[i].offset != p.chunk {
		return partRef{}, false
	}
	ch := s.chunks[i]
	j := ch.findPart(p.Offset) + 1
	if ch.numParts() < 2 || j >= ch.numParts() {
		return partRef{}, false
	}
	return partRef{chunk: ch.offset, ChunkPart: ch.part(j)}, true
}

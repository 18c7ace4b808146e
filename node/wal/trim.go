package wal

// FirstLSNOf returns the LSN of the first record of the log file with
// sequence number seq, and false if the log no longer (or not yet) has
// that file.
func (w *WAL) FirstLSNOf(seq uint64) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.mu.files {
		if h.seq == seq {
			return h.firstLSN, true
		}
	}
	return 0, false
}

// FirstFile returns the sequence number of the oldest file the log keeps.
func (w *WAL) FirstFile() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.files[0].seq
}

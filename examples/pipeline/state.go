package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sluice-streams/sluice/protocol/api"
)

// stateVersion is the state file's format; another is refused.
const stateVersion = 1

// state is what the pipeline saves at each reader-group checkpoint: the
// point it restarts from after a crash.
type state struct {
	Version int `json:"version"`
	// Checkpoint is the reader group checkpoint's name, Cut its stream
	// cut: the readings before Cut are accounted for by Windows and
	// Results, those after it are not.
	Checkpoint string        `json:"checkpoint"`
	Cut        api.StreamCut `json:"cut"`
	// Windows are the open windows' partial counts at Cut, the windows
	// closed so far and the late count.
	Windows windows `json:"windows"`
	// Txn is the output transaction that holds Results (the windows that
	// closed since the previous checkpoint), flushed: committing it is
	// the second phase. Results are kept too, so a Txn that was lost
	// (its lease ran out while the pipeline was down) is written again.
	Txn     string   `json:"txn"`
	Results []Result `json:"results"`
	// Next is the transaction begun after Txn, aborted on restart: its
	// results are computed again from Cut.
	Next string `json:"next,omitempty"`
	// Ended: the input stream was sealed and read to its end, and every
	// window closed; a run that finds it only finishes Txn. No Cut then.
	Ended bool `json:"ended,omitempty"`
}

// loadState reads the state file; (nil, nil) if there is none.
func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state file %s is not a state: %w", path, err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("state file %s: version %d, want %d", path, s.Version, stateVersion)
	}
	if s.Txn == "" || (len(s.Cut) == 0 && !s.Ended) {
		return nil, fmt.Errorf("state file %s: no transaction or no stream cut", path)
	}
	return &s, nil
}

// saveState writes s to path atomically and durably: a temporary file in
// the same directory, fsynced, renamed over path, then the directory
// fsynced, so after a crash path holds either the old state or the new
// one, whole.
func saveState(path string, s *state) error {
	s.Version = stateVersion
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save state: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("save state: sync %s: %w", dir, err)
	}
	return nil
}

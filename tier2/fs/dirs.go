package fs

import (
	"strings"
	"sync"
)

// knownDirs remembers directories (storage paths) known to exist with
// their entries durable, so that a segment's later chunks cost no mkdir
// and no directory fsync. The set holds every parent of a directory it
// holds. Every removal through the Storage forgets what it may remove; a
// directory removed behind the Storage's back (or by a removal racing
// the mkdir that found it) makes the next Create in it fail with
// ENOENT, which Create answers by forgetting it and making it again.
type knownDirs struct {
	mu struct {
		sync.Mutex
		dirs map[string]int // a known directory -> how many of its children are known
	}
}

func (k *knownDirs) has(dir string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.mu.dirs[dir]
	return ok
}

// add remembers dir and its parents.
func (k *knownDirs) add(dir string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mu.dirs == nil {
		k.mu.dirs = map[string]int{}
	}
	added := false // the previous (child) directory was added
	for d := dir; d != "." && d != ""; d = parent(d) {
		_, known := k.mu.dirs[d]
		if !known {
			k.mu.dirs[d] = 0
		}
		if added {
			k.mu.dirs[d]++
		}
		if known {
			return // and so are its parents
		}
		added = true
	}
}

// forget drops p and everything under it ("" is the root: everything).
// A p that is not a known directory (a file) costs a map look-up (as
// the set holds the parents of what it holds, nothing under it is
// known), and so does one without known children (a segment's
// directory); only a directory with known children is searched for
// them.
func (k *knownDirs) forget(p string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p == "" {
		k.mu.dirs = nil
		return
	}
	kids, ok := k.mu.dirs[p]
	if !ok {
		return
	}
	delete(k.mu.dirs, p)
	if up := parent(p); up != "." {
		k.mu.dirs[up]--
	}
	if kids == 0 {
		return
	}
	prefix := p + "/"
	for d := range k.mu.dirs {
		if strings.HasPrefix(d, prefix) {
			delete(k.mu.dirs, d) // its parent goes too: no count to keep
		}
	}
}

// parent is path.Dir for checked storage paths ("." at the top).
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// topDir is the first element of a checked storage path.
func topDir(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

package boltstore

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/sluice-streams/sluice/cluster"
)

// bbolt's page format, as far as checkPages reads it (native byte order,
// little endian on the platforms Sluice runs on):
//
//	page header, 16 bytes: id uint64 | flags uint16 | count uint16 | overflow uint32
//	branch element, 16 bytes: pos uint32 | ksize uint32 | pgid uint64
//	leaf element, 16 bytes: flags uint32 | pos uint32 | ksize uint32 | vsize uint32
//	freelist: count uint64 ids (count 0xFFFF: the first uint64 is the count)
//
// An element's pos is relative to the element's own address.
const (
	pageHeaderLen = 16
	elementLen    = 16
	branchFlag    = 0x01
	leafFlag      = 0x02
	freelistFlag  = 0x10
	bucketLeaf    = 0x01 // a leaf element that is a nested bucket
)

// checkPages bounds-checks the header and elements of every page below the
// high-water mark hwm (in pages of pageSize) whose header carries its own
// id, before bbolt's own check walks them: bbolt trusts these fields, so a
// damaged count or overflow makes it loop for billions of steps or read
// past the mapped file (a fault no recover catches). Pages whose header
// does not carry their id are overflow pages or never written; the tree
// walk of bbolt's check reaches the live ones.
func checkPages(path string, pageSize int, hwm uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("boltstore: verify %s: %w", path, err)
	}
	defer f.Close()
	page := make([]byte, pageSize)
	for id := uint64(2); id < hwm; id++ {
		if _, err := f.ReadAt(page[:pageHeaderLen], int64(id)*int64(pageSize)); err != nil {
			if err == io.EOF {
				return fmt.Errorf("boltstore: %s: %w: page %d is past the end of the file (high-water mark %d)", path, cluster.ErrCorrupt, id, hwm)
			}
			return fmt.Errorf("boltstore: verify %s: %w", path, err)
		}
		if binary.LittleEndian.Uint64(page) != id {
			continue
		}
		flags := binary.LittleEndian.Uint16(page[8:])
		if flags != branchFlag && flags != leafFlag && flags != freelistFlag {
			continue // a meta page copy or garbage: not walked by bbolt as a page of the tree
		}
		overflow := uint64(binary.LittleEndian.Uint32(page[12:]))
		if id+overflow >= hwm {
			return fmt.Errorf("boltstore: %s: %w: page %d: overflow of %d pages runs past the high-water mark %d", path, cluster.ErrCorrupt, id, overflow, hwm)
		}
		span := int((overflow + 1) * uint64(pageSize))
		if len(page) < span {
			page = make([]byte, span)
		}
		p := page[:span]
		if _, err := f.ReadAt(p, int64(id)*int64(pageSize)); err != nil {
			return fmt.Errorf("boltstore: %s: %w: page %d: reading %d bytes: %v", path, cluster.ErrCorrupt, id, span, err)
		}
		if err := checkPage(p, flags, hwm); err != nil {
			return fmt.Errorf("boltstore: %s: %w: page %d: %s", path, cluster.ErrCorrupt, id, err)
		}
	}
	return nil
}

// checkPage checks one page's elements against the page's span p.
func checkPage(p []byte, flags uint16, hwm uint64) error {
	count := int(binary.LittleEndian.Uint16(p[10:]))
	span := len(p)
	if flags == freelistFlag {
		start := pageHeaderLen
		n := count
		if count == 0xFFFF {
			if span < start+8 {
				return fmt.Errorf("freelist count does not fit")
			}
			c := binary.LittleEndian.Uint64(p[start:])
			if c > uint64(span) {
				return fmt.Errorf("freelist of %d ids does not fit in %d bytes", c, span)
			}
			n, start = int(c), start+8
		}
		if start+8*n > span {
			return fmt.Errorf("freelist of %d ids does not fit in %d bytes", n, span)
		}
		for i := range n {
			if id := binary.LittleEndian.Uint64(p[start+8*i:]); id < 2 || id >= hwm {
				return fmt.Errorf("free page id %d is outside [2, %d)", id, hwm)
			}
		}
		return nil
	}
	if pageHeaderLen+count*elementLen > span {
		return fmt.Errorf("%d elements do not fit in %d bytes", count, span)
	}
	// bbolt packs keys and values right after the elements, in element
	// order: each element's data starts where the previous one's ended.
	// A damaged count, pos or size breaks that chain.
	next := uint64(pageHeaderLen + count*elementLen)
	for i := range count {
		at := pageHeaderLen + i*elementLen
		e := p[at : at+elementLen]
		var pos, size uint64
		if flags == branchFlag {
			pos, size = uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
			if child := binary.LittleEndian.Uint64(e[8:]); child < 2 || child >= hwm {
				return fmt.Errorf("element %d: child page %d is outside [2, %d)", i, child, hwm)
			}
		} else {
			if f := binary.LittleEndian.Uint32(e); f&^bucketLeaf != 0 {
				return fmt.Errorf("element %d: unknown flags 0x%x", i, f)
			}
			pos = uint64(binary.LittleEndian.Uint32(e[4:]))
			size = uint64(binary.LittleEndian.Uint32(e[8:])) + uint64(binary.LittleEndian.Uint32(e[12:]))
		}
		if uint64(at)+pos != next {
			return fmt.Errorf("element %d: data at %d, not at %d where the previous element's ended", i, uint64(at)+pos, next)
		}
		if next+size > uint64(span) {
			return fmt.Errorf("element %d: %d bytes at %d run past the page's %d bytes", i, size, next, span)
		}
		if flags == leafFlag && binary.LittleEndian.Uint32(e)&bucketLeaf != 0 {
			ksize := uint64(binary.LittleEndian.Uint32(e[8:]))
			if err := checkBucket(p[next+ksize:next+size], hwm); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		next += size
	}
	return nil
}

// bucketHeaderLen is the size of a nested bucket's value header: its root
// page id and its sequence, uint64 each. A root of 0 means an inline
// bucket, whose leaf page follows the header.
const bucketHeaderLen = 16

// checkBucket checks a nested bucket's value: its root page id is a page
// of the file, or its inline leaf page is sound.
func checkBucket(v []byte, hwm uint64) error {
	if len(v) < bucketHeaderLen {
		return fmt.Errorf("bucket value of %d bytes is shorter than its header", len(v))
	}
	root := binary.LittleEndian.Uint64(v)
	if root != 0 {
		if root < 2 || root >= hwm {
			return fmt.Errorf("bucket root page %d is outside [2, %d)", root, hwm)
		}
		return nil
	}
	inline := v[bucketHeaderLen:]
	if len(inline) < pageHeaderLen {
		return fmt.Errorf("inline bucket page of %d bytes is shorter than a page header", len(inline))
	}
	if f := binary.LittleEndian.Uint16(inline[8:]); f != leafFlag {
		return fmt.Errorf("inline bucket page has flags 0x%x, not a leaf's", f)
	}
	return checkPage(inline, leafFlag, hwm)
}

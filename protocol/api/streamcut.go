package api

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-streams/sluice/protocol"
)

// StreamCut is a position in a stream: segment qualified name -> offset.
// See the package documentation for its text form.
type StreamCut map[string]int64

// String returns the text form (package documentation). Keys that are not
// stream segment names are written as they are, which ParseStreamCut then
// refuses; Validate tells them apart first.
func (c StreamCut) String() string {
	type entry struct {
		q   protocol.QualifiedName
		key string
		off int64
	}
	groups := map[string][]entry{}
	for k, off := range c {
		q, err := protocol.ParseSegmentName(k)
		g := "?"
		if err == nil {
			g = q.Scope + "/" + q.Stream
		}
		groups[g] = append(groups[g], entry{q, k, off})
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, g := range names {
		if i > 0 {
			b.WriteByte(';')
		}
		es := groups[g]
		sort.Slice(es, func(i, j int) bool {
			if es[i].q.Number != es[j].q.Number {
				return es[i].q.Number < es[j].q.Number
			}
			if es[i].q.Epoch != es[j].q.Epoch {
				return es[i].q.Epoch < es[j].q.Epoch
			}
			return es[i].key < es[j].key
		})
		b.WriteString(g)
		b.WriteByte(':')
		for j, e := range es {
			if j > 0 {
				b.WriteByte(',')
			}
			if g == "?" {
				b.WriteString(e.key)
			} else {
				b.WriteString(strconv.FormatInt(e.q.Number, 10))
				b.WriteString(".#epoch.")
				b.WriteString(strconv.FormatInt(e.q.Epoch, 10))
			}
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(e.off, 10))
		}
	}
	return b.String()
}

// Validate checks that every key is a stream segment name (not a
// transaction segment) and every offset is in RangeCutOffset. It does not check that the
// segments form a consistent cut of their stream: only the controller knows
// the stream's segments.
func (c StreamCut) Validate() error {
	for k, off := range c {
		q, err := protocol.ParseSegmentName(k)
		if err != nil {
			return fmt.Errorf("%w: stream cut: %v", ErrInvalid, err)
		}
		if q.Transaction != "" {
			return fmt.Errorf("%w: stream cut: %q is a transaction segment", ErrInvalid, k)
		}
		if off < RangeCutOffset.Min {
			return fmt.Errorf("%w: stream cut: segment %q: negative offset %d", ErrInvalid, k, off)
		}
	}
	return nil
}

// ParseStreamCut parses the text form of a stream cut. Errors wrap
// ErrInvalid and quote the part that is wrong.
func ParseStreamCut(s string) (StreamCut, error) {
	c := StreamCut{}
	if s == "" {
		return c, nil
	}
	bad := func(part, why string) (StreamCut, error) {
		return nil, fmt.Errorf("%w: stream cut %q: %q: %s", ErrInvalid, s, part, why)
	}
	for _, group := range strings.Split(s, ";") {
		stream, list, ok := strings.Cut(group, ":")
		if !ok {
			return bad(group, "want scope/stream:N.#epoch.E=OFFSET,...")
		}
		scope, name, ok := strings.Cut(stream, "/")
		if !ok {
			return bad(stream, "want scope/stream before ':'")
		}
		if list == "" {
			return bad(group, "no segments after ':'")
		}
		for _, item := range strings.Split(list, ",") {
			seg, offText, ok := strings.Cut(item, "=")
			if !ok {
				return bad(item, "want N.#epoch.E=OFFSET")
			}
			full := scope + "/" + name + "/" + seg
			q, err := protocol.ParseSegmentName(full)
			if err != nil {
				return bad(item, err.Error())
			}
			if q.Transaction != "" || q.Scope != scope || q.Stream != name {
				return bad(item, "not a segment of "+stream)
			}
			off, err := parseOffset(offText)
			if err != nil {
				return bad(item, err.Error())
			}
			if _, dup := c[full]; dup {
				return bad(item, "segment listed twice")
			}
			c[full] = off
		}
	}
	return c, nil
}

func parseOffset(s string) (int64, error) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("offset %q is not a canonical non-negative decimal", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("offset %q is not a canonical non-negative decimal", s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("offset %q out of range", s)
	}
	return v, nil
}

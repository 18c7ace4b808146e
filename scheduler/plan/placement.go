package plan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Placement constraints, Marathon's operators as the DC/OS SDK
// (dcos-commons) takes them for a pod type. A constraint is a list of
// clauses, each "field:OPERATOR[:value]"; a pod may go to an agent only
// if every clause allows it. The field is "hostname", "@hostname",
// "@zone" or "@region" (the agent's fault domain), or the name of an
// agent attribute.
//
// Operators (v: the field's value on the offered agent; "placed": the
// other pods of the same kind that have an agent):
//
//	UNIQUE          no placed pod has v
//	CLUSTER[:x]     v is x; without x, v is every placed pod's value
//	IS:x            v is x
//	LIKE:re         v matches re (whole value)
//	UNLIKE:re       v does not match re (an agent without the attribute matches nothing)
//	MAX_PER:n       fewer than n placed pods have v
//	GROUP_BY[:n]    spread evenly: while fewer than n values hold pods,
//	                only a value holding none; then only a value
//	                holding no more pods than the least-used one
//
// The colon form separates clauses with ',' ("hostname:UNIQUE,@zone:
// GROUP_BY:2"); the JSON form is Marathon's array of arrays
// ([["hostname","UNIQUE"],["@zone","GROUP_BY","2"]]) and takes values
// with ',' or ':' in them (a regular expression, say).

// Operators.
const (
	OpUnique  = "UNIQUE"
	OpCluster = "CLUSTER"
	OpIs      = "IS"
	OpLike    = "LIKE"
	OpUnlike  = "UNLIKE"
	OpMaxPer  = "MAX_PER"
	OpGroupBy = "GROUP_BY"
)

// Fields that are not agent attributes.
const (
	FieldHostname = "hostname"
	FieldZone     = "@zone"
	FieldRegion   = "@region"
)

// Clause is one constraint clause.
type Clause struct {
	Field string
	Op    string
	Value string // "" when the operator takes none

	re *regexp.Regexp // LIKE, UNLIKE
	n  int            // MAX_PER, GROUP_BY (0: GROUP_BY without a count)
}

func (c Clause) String() string {
	if c.Value == "" {
		return c.Field + ":" + c.Op
	}
	return c.Field + ":" + c.Op + ":" + c.Value
}

// Placement is a parsed constraint; the zero value allows everything.
type Placement []Clause

func (pl Placement) String() string {
	parts := make([]string, len(pl))
	for i, c := range pl {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// NamesRegion reports whether a clause is about the region: such a
// constraint may place a pod outside the master's region.
func (pl Placement) NamesRegion() bool {
	for _, c := range pl {
		if c.Field == FieldRegion {
			return true
		}
	}
	return false
}

// ParsePlacement parses a constraint in the colon or the JSON form
// (blank: none). A bad one is refused with ErrPlacement saying which
// clause and why.
func ParsePlacement(s string) (Placement, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var raw [][]string
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			var flat []string // one clause: ["hostname","UNIQUE"]
			if json.Unmarshal([]byte(s), &flat) != nil {
				return nil, fmt.Errorf("%w: %q is neither an array of [field, operator, value] arrays nor one such array: %v", ErrPlacement, s, err)
			}
			raw = [][]string{flat}
		}
	} else {
		for _, part := range strings.Split(s, ",") {
			raw = append(raw, strings.SplitN(strings.TrimSpace(part), ":", 3))
		}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: %q has no clause", ErrPlacement, s)
	}
	pl := make(Placement, 0, len(raw))
	for _, r := range raw {
		c, err := parseClause(r)
		if err != nil {
			return nil, err
		}
		pl = append(pl, c)
	}
	return pl, nil
}

func parseClause(r []string) (Clause, error) {
	if len(r) < 2 || len(r) > 3 {
		return Clause{}, fmt.Errorf("%w: %q: want field:OPERATOR or field:OPERATOR:value", ErrPlacement, strings.Join(r, ":"))
	}
	c := Clause{Field: strings.TrimSpace(r[0]), Op: strings.ToUpper(strings.TrimSpace(r[1]))}
	if len(r) == 3 {
		c.Value = r[2]
	}
	bad := func(why string) (Clause, error) {
		return Clause{}, fmt.Errorf("%w: %q: %s", ErrPlacement, strings.Join(r, ":"), why)
	}
	if c.Field == "@hostname" {
		c.Field = FieldHostname
	}
	if c.Field == "" {
		return bad("no field")
	}
	if strings.HasPrefix(c.Field, "@") && c.Field != FieldZone && c.Field != FieldRegion {
		return bad("unknown field (want hostname, @zone, @region or an agent attribute)")
	}
	switch c.Op {
	case OpUnique:
		if len(r) == 3 {
			return bad("UNIQUE takes no value")
		}
	case OpCluster:
	case OpIs:
		if c.Value == "" {
			return bad("IS needs a value")
		}
	case OpLike, OpUnlike:
		if c.Value == "" {
			return bad(c.Op + " needs a regular expression")
		}
		re, err := regexp.Compile("^(?:" + c.Value + ")$")
		if err != nil {
			return bad("bad regular expression: " + err.Error())
		}
		c.re = re
	case OpMaxPer, OpGroupBy:
		if c.Value == "" && c.Op == OpMaxPer {
			return bad("MAX_PER needs a count")
		}
		if c.Value != "" {
			n, err := strconv.Atoi(c.Value)
			if err != nil || n < 1 {
				return bad(c.Op + " needs a count of 1 or more")
			}
			c.n = n
		}
	default:
		return bad("unknown operator (want UNIQUE, CLUSTER, IS, LIKE, UNLIKE, MAX_PER or GROUP_BY)")
	}
	return c, nil
}

// Where is what the plan knows of the agent a pod was placed on, from
// its offers: what constraints look at.
type Where struct {
	Hostname   string            `msgpack:"host"`
	Region     string            `msgpack:"region,omitempty"`
	Zone       string            `msgpack:"zone,omitempty"`
	Attributes map[string]string `msgpack:"attrs,omitempty"`
}

func whereOf(o Offer) *Where {
	w := &Where{Hostname: o.Hostname, Region: o.Region, Zone: o.Zone}
	if len(o.Attributes) > 0 {
		w.Attributes = make(map[string]string, len(o.Attributes))
		for k, v := range o.Attributes {
			w.Attributes[k] = v
		}
	}
	return w
}

// value is the field's value at w; ok is false when the agent has no
// such attribute (or fault domain).
func (w *Where) value(field string) (string, bool) {
	switch field {
	case FieldHostname:
		return w.Hostname, true
	case FieldZone:
		return w.Zone, w.Zone != ""
	case FieldRegion:
		return w.Region, w.Region != ""
	}
	v, ok := w.Attributes[field]
	return v, ok
}

// Allows reports whether a pod may go to the agent at where, given
// where the other pods of its kind are (placed); if not, why.
func (pl Placement) Allows(where *Where, placed []*Where) (bool, string) {
	for _, c := range pl {
		if ok, why := c.allows(where, placed); !ok {
			return false, c.String() + ": " + why
		}
	}
	return true, ""
}

func (c Clause) allows(where *Where, placed []*Where) (bool, string) {
	v, has := where.value(c.Field)
	if !has && c.Op != OpUnlike {
		return false, "the agent has no " + c.Field
	}
	counts := map[string]int{}
	for _, w := range placed {
		if pv, ok := w.value(c.Field); ok {
			counts[pv]++
		}
	}
	switch c.Op {
	case OpUnique:
		if counts[v] > 0 {
			return false, fmt.Sprintf("%q already holds a pod", v)
		}
	case OpCluster:
		want := c.Value
		if want == "" {
			for pv := range counts {
				want = pv // every placed pod has the one value
			}
		}
		if want != "" && v != want {
			return false, fmt.Sprintf("%q is not %q", v, want)
		}
	case OpIs:
		if v != c.Value {
			return false, fmt.Sprintf("%q is not %q", v, c.Value)
		}
	case OpLike:
		if !c.re.MatchString(v) {
			return false, fmt.Sprintf("%q does not match", v)
		}
	case OpUnlike:
		if has && c.re.MatchString(v) {
			return false, fmt.Sprintf("%q matches", v)
		}
	case OpMaxPer:
		if counts[v] >= c.n {
			return false, fmt.Sprintf("%q already holds %d pods", v, counts[v])
		}
	case OpGroupBy:
		if counts[v] == 0 {
			return true, ""
		}
		if len(counts) < c.n {
			return false, fmt.Sprintf("%q holds pods while only %d of %d values do", v, len(counts), c.n)
		}
		least := -1
		for _, k := range sortedKeys(counts) {
			if least < 0 || counts[k] < least {
				least = counts[k]
			}
		}
		if counts[v] > least {
			return false, fmt.Sprintf("%q holds %d pods, another value %d", v, counts[v], least)
		}
	}
	return true, ""
}

// placedWhere lists where the other pods of pod's kind are placed,
// sorted by pod name.
func (p *Plan) placedWhere(pod *Pod) []*Where {
	var out []*Where
	for _, q := range p.ordered() {
		if q.Kind == pod.Kind && q.Name != pod.Name && q.AgentID != "" && q.Where != nil {
			out = append(out, q.Where)
		}
	}
	return out
}

// placement is the kind's parsed constraint. The spec's text was
// checked by SetPlacement (or by the driver before New); a stored one
// that no longer parses allows nothing rather than everything.
func (p *Plan) placement(k PodKind) (Placement, error) {
	return ParsePlacement(p.spec.Placement[k])
}

// SetPlacement sets the placement constraint of one kind of pod, for
// placements from now on (pods stay where they are). It refuses a
// constraint ParsePlacement refuses, and changes nothing then.
func (p *Plan) SetPlacement(k PodKind, constraint string) error {
	if _, err := ParsePlacement(constraint); err != nil {
		return fmt.Errorf("%s: %w", k, err)
	}
	if p.spec.Placement == nil {
		p.spec.Placement = map[PodKind]string{}
	}
	if strings.TrimSpace(constraint) == "" {
		delete(p.spec.Placement, k)
		return nil
	}
	p.spec.Placement[k] = constraint
	return nil
}

// PortRange is an inclusive range of ports in an offer.
type PortRange struct{ Begin, End uint64 }

// SetPorts sets each kind's port needs: a fixed port, or 0 for any
// port the offer holds. They come from the configuration on every
// start (the tasks' command lines do) and are not stored.
func (p *Plan) SetPorts(ports map[PodKind][]int) {
	p.spec.Ports = ports
}

// fixedPorts is every fixed port any kind needs: a kind that takes any
// port leaves those alone while others are free.
func (s Spec) fixedPorts() map[int]bool {
	out := map[int]bool{}
	for _, ps := range s.Ports {
		for _, port := range ps {
			if port != 0 {
				out[port] = true
			}
		}
	}
	return out
}

// pickPorts takes kind k's ports from the offered ranges, skipping
// those taken (by pods placed from the same offer): each fixed port
// itself, and for each 0 the lowest free port no kind needs fixed
// (else the lowest free). ok is false, with the reason, if a port is
// missing; taken is then unchanged.
func (p *Plan) pickPorts(k PodKind, offered []PortRange, taken map[int]bool) ([]int, bool, string) {
	want := p.spec.Ports[k]
	if len(want) == 0 {
		return nil, true, ""
	}
	in := func(port int) bool {
		for _, r := range offered {
			if uint64(port) >= r.Begin && uint64(port) <= r.End {
				return true
			}
		}
		return false
	}
	mine := map[int]bool{}
	out := make([]int, len(want))
	for i, port := range want {
		if port == 0 {
			continue
		}
		if !in(port) || taken[port] || mine[port] {
			return nil, false, fmt.Sprintf("port %d is not offered", port)
		}
		mine[port] = true
		out[i] = port
	}
	fixed := p.spec.fixedPorts()
	ranges := append([]PortRange(nil), offered...)
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].Begin < ranges[j].Begin })
	pick := func(avoidFixed bool) int {
		for _, r := range ranges {
			for port := r.Begin; port <= r.End && port <= 65535; port++ {
				q := int(port)
				if q == 0 || taken[q] || mine[q] || (avoidFixed && fixed[q]) {
					continue
				}
				return q
			}
		}
		return 0
	}
	for i, port := range want {
		if port != 0 {
			continue
		}
		q := pick(true)
		if q == 0 {
			q = pick(false)
		}
		if q == 0 {
			return nil, false, fmt.Sprintf("%d ports wanted, fewer offered", len(want))
		}
		mine[q] = true
		out[i] = q
	}
	for q := range mine {
		taken[q] = true
	}
	return out, true, ""
}

// portsIn reports whether every port is in the ranges.
func portsIn(ports []int, ranges []PortRange) bool {
	for _, q := range ports {
		in := false
		for _, r := range ranges {
			if uint64(q) >= r.Begin && uint64(q) <= r.End {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// expandPorts lists the ports of the ranges (nil for none).
func expandPorts(ranges []PortRange) []int {
	var out []int
	for _, r := range ranges {
		for q := r.Begin; q <= r.End && q <= 65535; q++ {
			out = append(out, int(q))
		}
	}
	return out
}

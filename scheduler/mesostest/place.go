package mesostest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// errDomain: an agent with a fault domain added to a master without
// one, or an agent's domain without a region or zone.
var errDomain = errors.New("mesostest: bad fault domain")

// agentPlace is what an agent's offers say of where it is: its
// attributes (AgentSpec.Attributes) and fault domain (AgentSpec.Region
// and Zone).
type agentPlace struct {
	attributes   map[string]string
	region, zone string
}

// placeOf checks and keeps spec's attributes and domain. Mesos refuses
// the registration of an agent with a domain when the master has none
// (src/master/master.cpp, on registering an agent) and an agent flag
// --domain with a region but no zone or the reverse (both are required
// fields of DomainInfo.FaultDomain).
func (m *Master) placeOf(spec AgentSpec) (agentPlace, error) {
	if (spec.Region == "") != (spec.Zone == "") {
		return agentPlace{}, fmt.Errorf("%w: agent %s: region %q and zone %q: give both or neither", errDomain, spec.ID, spec.Region, spec.Zone)
	}
	if spec.Region != "" && m.opts.Region == "" {
		return agentPlace{}, fmt.Errorf("%w: agent %s has a domain and the master has none (Options.Region)", errDomain, spec.ID)
	}
	pl := agentPlace{region: spec.Region, zone: spec.Zone}
	if len(spec.Attributes) > 0 {
		pl.attributes = make(map[string]string, len(spec.Attributes))
		for k, v := range spec.Attributes {
			pl.attributes[k] = v
		}
	}
	return pl, nil
}

// describe puts the agent's attributes (TEXT, by name) and fault domain
// into an offer of it, as Mesos fills Offer.attributes and
// Offer.domain from the agent's info.
func (pl agentPlace) describe(o *mesos.Offer) {
	names := make([]string, 0, len(pl.attributes))
	for k := range pl.attributes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		o.Attributes = append(o.Attributes, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: pl.attributes[k]}})
	}
	if pl.region != "" {
		o.Domain = domainInfo(pl.region, pl.zone)
	}
}

func domainInfo(region, zone string) *mesos.DomainInfo {
	return &mesos.DomainInfo{FaultDomain: &mesos.DomainInfo_FaultDomain{
		Region: mesos.DomainInfo_FaultDomain_RegionInfo{Name: region},
		Zone:   mesos.DomainInfo_FaultDomain_ZoneInfo{Name: zone},
	}}
}

// offerableLocked reports whether fw may be offered a's resources. As
// Mesos' allocator does (isCapableOfReceivingAgent in
// src/master/allocator/mesos/hierarchical.cpp), an agent in a region
// other than the master's is offered only to a framework with the
// REGION_AWARE capability; an agent without a domain is never remote.
func (m *Master) offerableLocked(fw *framework, a *agent) bool {
	if a.place.region == "" || a.place.region == m.opts.Region {
		return true
	}
	for _, c := range fw.info.Capabilities {
		if c.Type == mesos.FrameworkInfo_Capability_REGION_AWARE {
			return true
		}
	}
	return false
}

// masterInfo is SUBSCRIBED's master_info: the master's id, address and,
// with Options.Region, its domain (what a framework learns its own
// region from).
func (m *Master) masterInfo() *mesos.MasterInfo {
	port := uint32(5050)
	mi := &mesos.MasterInfo{ID: "mesostest", IP: 0x0100007f, Port: &port}
	if u, err := url.Parse(m.srv.URL); err == nil {
		if _, p, err := net.SplitHostPort(u.Host); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				port = uint32(n)
			}
		}
		host := u.Hostname()
		mi.Hostname = &host
	}
	if m.opts.Region != "" {
		mi.Domain = domainInfo(m.opts.Region, m.opts.Zone)
	}
	return mi
}

package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-streams/sluice/scheduler/plan"
)

// placementOptions are the placement constraints of `sluice scheduler`,
// one flag per kind of pod (--controller-placement ...): Marathon-style
// constraints, in the colon form (hostname:UNIQUE,@zone:GROUP_BY:2) or
// the JSON form ([["hostname","UNIQUE"]]); empty: anywhere. The
// scheduler refuses one the plan cannot parse, naming it.
type placementOptions struct {
	byKind map[plan.PodKind]*string
}

// placementFlagKinds are the kinds with a placement flag, and the
// flags' names.
var placementFlagKinds = []struct {
	kind plan.PodKind
	flag string
}{
	{plan.Controller, "controller-placement"},
	{plan.Node, "node-placement"},
	{plan.HDFSHead, "hdfs-head-placement"},
	{plan.NFSHead, "nfs-head-placement"},
	{plan.S3Head, "s3-head-placement"},
}

func (o *placementOptions) flags() []cli.Flag {
	o.byKind = map[plan.PodKind]*string{}
	var out []cli.Flag
	for _, k := range placementFlagKinds {
		dst := new(string)
		o.byKind[k.kind] = dst
		out = append(out, &cli.StringFlag{Name: k.flag, Destination: dst,
			Usage: "placement `CONSTRAINT` of the " + string(k.kind) + " pods, Marathon-style: hostname:UNIQUE, hostname:LIKE:REGEX, @zone:GROUP_BY:2, ATTRIBUTE:IS:VALUE, ... (',' between clauses) or [[\"hostname\",\"UNIQUE\"]]; empty: anywhere. Applies to pods placed from then on"})
	}
	return out
}

// spec is the plan's Spec.Placement (kinds without a constraint left
// out).
func (o *placementOptions) spec() map[plan.PodKind]string {
	out := map[plan.PodKind]string{}
	for k, v := range o.byKind {
		if v != nil && *v != "" {
			out[k] = *v
		}
	}
	return out
}

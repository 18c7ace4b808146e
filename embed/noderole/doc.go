// Package noderole assembles the node role: it opens a node (package node)
// on its data directory with its tier-2 storage, serves it with
// node/server on a TCP listener and, in cluster mode, joins the cluster
// through node/membership. Start opens everything and Node.Stop closes it
// in the reverse order.
//
// Programs and tests use it through package embed (embed.StartNode is
// Start). It is a package of its own, below embed, because embed also
// assembles the controller: the controller's in-package tests start a
// real node and cannot import a package that imports the controller.
package noderole

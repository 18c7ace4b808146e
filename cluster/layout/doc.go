// Package layout is what cluster mode keeps in the metadata store: the
// keys the controllers and the nodes share, and the format of their
// values: the registrations of nodes and controllers, and above all the
// container assignment (Map). Controllers (package
// controller and controller/leader) and nodes (package node/membership)
// both import it, so neither role imports the other; the planner that
// computes the next assignment stays with the leader (controller/assignment).
//
// # Keys
//
// Keys are relative to the store's root (zkstore.Open, e.g. "/sluice"):
//
//	cluster/controllers/<id>  EPHEMERAL, a live controller's registration:
//	                          JSON ControllerRegistration {"id": ..., "addr":
//	                          "host:port"} (its REST API); written by that
//	                          controller (controller/leader)
//	cluster/election          the controllers' election (zkstore.Store.Elect);
//	                          each candidate's data is its controller id
//	cluster/nodes/<id>        EPHEMERAL, a live node's registration: JSON
//	                          NodeRegistration {"id": ..., "addr": "host:port",
//	                          "started": RFC 3339, "tier2": true|omitted};
//	                          written by that node (node/membership), read by
//	                          the controllers (locator, leader, node list)
//	cluster/assignment        the assignment Map as JSON; written only by the
//	                          leader controller with a compare-and-set (Create
//	                          when absent); nodes and the REST API only read it
//	cluster/drain/<id>        {}: a node an operator is emptying (REST API,
//	                          any controller); the leader moves its
//	                          containers away
//	cluster/handover/<c>      container c's owner released it for a move:
//	                          JSON Released {"epoch": E}; written by the node,
//	                          read by the leader
//
// Each value's type has Encode, and a Parse function reads it
// (ParseNodeRegistration, ParseControllerRegistration, Parse for the
// Map): the key and the format of its value have this one owner.
//
// The store's watches report no change of a key's children, so whoever
// writes a child of cluster/nodes, cluster/drain or cluster/handover also
// writes the parent key, which the leader watches. The stream metadata
// (scopes/...) is the controller's own (package controller).
//
// # The assignment map
//
// Map.Encode writes, and Parse reads, one JSON object:
//
//	{"containers": [
//	  {"node": "n1", "epoch": 3},
//	  {"node": "n2", "epoch": 5, "moveTo": "n1"},
//	  {"node": "n1", "epoch": 6, "from": 5},
//	  {"node": "", "epoch": 0}
//	]}
//
// Element i is the Owner of container i: the node that serves it ("" while
// unassigned) and the epoch of that assignment. moveTo (omitted when
// empty) asks the owner to hand the container over to that node through
// tier 2; from (omitted when 0) is the epoch of the hand-over the owner
// builds the container from. The array has exactly as many elements as
// the cluster has containers: Parse rejects a map of another size, so a
// node or controller started with another --containers serves nothing
// rather than the wrong containers.
package layout
